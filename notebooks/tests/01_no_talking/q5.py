from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 4

@test_case(points=1, hidden=False, 
    failure_message="TrainTwoSentences(net, steps=3) should return a list of 3 plain numbers: the loss of every step (use loss.item(), not the loss tensor).")
def test_returns_list(TrainTwoSentences):
    import torch
    from course import MASK, DiffusionLoss, NoTalking, SamplePInit, vocab
    from course.handles import given, student
    TrainTwoSentences = student(TrainTwoSentences)
    torch.manual_seed(0)
    net = given('NoTalking')(len(vocab))
    copy = NoTalking(len(vocab))
    copy.load_state_dict({name: value.float() for name, value in net.params().items()})
    torch.manual_seed(123)
    x_0 = torch.stack([SamplePInit() for b in range(1024)])
    with torch.no_grad():
        start = DiffusionLoss(copy, x_0, MASK).item()
    losses = TrainTwoSentences(net, steps=3)
    assert type(losses) is list, f'got a {type(losses).__name__}, not a list'
    assert len(losses) == 3, f'got {len(losses)} losses for 3 steps'
    assert all((type(loss) in (int, float) for loss in losses)), 'the losses are not plain numbers'
    assert abs(losses[0] - start) < 1.0 and all((0 < loss < start + 1.0 for loss in losses)), 'these numbers are not the losses of the network: append the loss.item() of every step'

