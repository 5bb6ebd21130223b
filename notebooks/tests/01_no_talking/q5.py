from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 4

@test_case(points=1, hidden=False, 
    failure_message="TrainTwoSentences(net, steps=3) should return a list of 3 plain numbers (use loss.item(), not the loss tensor).")
def test_returns_list(TrainTwoSentences):
    import torch
    from course import NoTalking, vocab
    torch.manual_seed(0)
    losses = TrainTwoSentences(NoTalking(len(vocab)), steps=3)
    assert isinstance(losses, list), f'got a {type(losses).__name__}, not a list'
    assert len(losses) == 3, f'got {len(losses)} losses for 3 steps'
    assert all((isinstance(l, (int, float)) for l in losses)), 'the losses are not plain numbers'

