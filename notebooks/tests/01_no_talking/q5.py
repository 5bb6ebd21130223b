from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 4

@test_case(points=1, hidden=False, 
    failure_message="TrainTwoSentences(net, steps=3) should return a list of 3 plain numbers (use loss.item(), not the loss tensor).")
def test_returns_list(TrainTwoSentences):
    import torch
    from course import vocab
    from course.handles import given, student
    TrainTwoSentences = student(TrainTwoSentences)
    torch.manual_seed(0)
    net = given('NoTalking')(len(vocab))
    losses = TrainTwoSentences(net, steps=3)
    assert type(losses) is list, f'got a {type(losses).__name__}, not a list'
    assert len(losses) == 3, f'got {len(losses)} losses for 3 steps'
    assert all((type(l) in (int, float) for l in losses)), 'the losses are not plain numbers'

