from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1

@test_case(points=0.5, hidden=False, 
    failure_message="Compare net(x)[0] for two batches with the same first sentence: torch.allclose should say True.")
def test_first_unchanged_answer(first_unchanged):
    assert first_unchanged is True, 'first_unchanged should be True: the logits of the first sentence should not change when the other sentences do'

