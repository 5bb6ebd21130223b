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

@test_case(points=2, hidden=True, 
    failure_message="A network trained with your TrainTwoSentences for 150 steps did not get better (its DiffusionLoss, measured by the test, barely moved). Does every step call loss.backward() and opt.step(), with an optimizer made from net.parameters()?")
def test_trains(TrainTwoSentences):
    import torch
    from course import DiffusionLoss, MASK, NoTalking, SamplePInit, vocab

    def measure(net):
        torch.manual_seed(123)
        x_0 = torch.stack([SamplePInit() for b in range(2048)]).to(next(net.parameters()).device)
        with torch.no_grad():
            return DiffusionLoss(net, x_0, MASK).item()
    torch.manual_seed(1)
    net = NoTalking(len(vocab), dim=16)
    before = measure(net)
    torch.manual_seed(2)
    losses = TrainTwoSentences(net, steps=150)
    after = measure(net)
    assert after < before - 1.0, f'loss {before:.2f} -> {after:.2f}'
    assert len(losses) == 150, 'not 150 losses'
    assert all((float(l) == float(l) and float(l) >= 0 for l in losses)), 'losses are not finite numbers'

@test_case(points=1, hidden=True, 
    failure_message="The gradients pile up from step to step: call opt.zero_grad() once in every step, before loss.backward().")
def test_zero_grad(TrainTwoSentences):
    import torch
    from course import NoTalking, vocab
    torch.manual_seed(3)
    net = NoTalking(len(vocab), dim=8)
    piled = []
    for p in net.parameters():
        p.register_hook(lambda g, p=p: piled.append(p.grad is not None and bool(p.grad.abs().max() > 0)))
    TrainTwoSentences(net, steps=5)
    assert piled and (not any(piled)), 'gradients were not cleared'

