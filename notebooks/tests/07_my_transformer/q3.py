from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1

@test_case(points=0.5, hidden=False, 
    failure_message="Compare net(x)[0] for two batches with the same first sentence: torch.allclose should say True.")
def test_first_unchanged_answer(first_unchanged):
    import torch
    from course.handles import student
    answer = student(first_unchanged)
    ok = answer is True or (type(answer) is torch.Tensor and answer.numel() == 1 and (bool(answer.item()) is True))
    assert ok, 'first_unchanged should be True: the logits of the first sentence should not change when the other sentences do'

