from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 4


@test_case(points=1, hidden=False, failure_message='TrainTwoSentences(net, steps=3) should return a list of 3 plain numbers: the loss of every step (use loss.item(), not the loss tensor).')  # noqa: E501
def test_returns_list(TrainTwoSentences):
    import torch

    from course import MASK, DiffusionLoss, NoTalking, SamplePInit, vocab
    from course.handles import given, student
    TrainTwoSentences = student(TrainTwoSentences)
    torch.manual_seed(0)
    net = given("NoTalking")(len(vocab))
    copy = NoTalking(len(vocab))                 # the network's loss before training, measured here
    copy.load_state_dict({name: value.float() for name, value in net.params().items()})
    torch.manual_seed(123)
    x_0 = torch.stack([SamplePInit() for b in range(1024)])
    with torch.no_grad():
        start = DiffusionLoss(copy, x_0, MASK).item()
    losses = TrainTwoSentences(net, steps=3)
    assert type(losses) is list, f"got a {type(losses).__name__}, not a list"
    assert len(losses) == 3, f"got {len(losses)} losses for 3 steps"
    assert all(type(loss) in (int, float) for loss in losses), "the losses are not plain numbers"
    # the first loss is the network's loss before any step (measured here on many more sentences);
    # three steps of training then lower it a little, never raise it much
    assert abs(losses[0] - start) < 1.0 and all(0 < loss < start + 1.0 for loss in losses), \
        "these numbers are not the losses of the network: append the loss.item() of every step"


@test_case(points=2, hidden=True, failure_message='A network trained with your TrainTwoSentences for 150 steps did not get better (its DiffusionLoss, measured by the autograder, barely moved). Does every step call loss.backward() and then opt.step(), with an optimizer made from the parameters of the network you were given?')  # noqa: E501
def test_trains(TrainTwoSentences):
    from autograder.checks import training
    from course.handles import student
    TrainTwoSentences = student(TrainTwoSentences)
    net, before, params = training.trained(TrainTwoSentences, seed=1, dim=16, sentences=2048, steps=150)
    after = training.two_sentence_loss(params, dim=16, sentences=2048)
    assert after < before - 1.0, f"the loss went from {before:.2f} to {after:.2f}"


@test_case(points=1, hidden=True, failure_message='Either your TrainTwoSentences did not train the network in 10 steps, or the gradients pile up from step to step: after a few steps the network holds the sum of the gradients of all the steps, not of one. Every step should call opt.zero_grad() (before loss.backward()), then loss.backward() and opt.step().')  # noqa: E501
def test_zero_grad(TrainTwoSentences):
    import math

    from autograder.checks import training
    from course.handles import student
    TrainTwoSentences = student(TrainTwoSentences)
    net, before, params = training.trained(TrainTwoSentences, seed=3, dim=8, sentences=1024, steps=10)
    # the gradients only matter in a function that trains: 10 steps of Adam lower the loss
    assert training.two_sentence_loss(params, dim=8, sentences=1024) < before - 0.05, \
        "TrainTwoSentences did not train the network"
    held = training.held_gradient(net, params)
    if held == 0:                                # cleared at the end of every step
        return
    ratio = math.sqrt(held) / training.one_batch_gradient(params, dim=8)
    assert ratio < 3, f"the gradients are {ratio:.1f} times those of one batch"
