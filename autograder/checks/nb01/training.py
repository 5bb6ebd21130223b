"""Training, measured by the check itself: the loss of a network is computed here, with the
course's own loss, from the parameters read back, never from numbers the student's code reports."""
from __future__ import annotations

import math
from typing import Any, cast

import torch

from course import MASK, DiffusionLoss, NoTalking, SamplePInit, vocab


def no_talking(params: dict[str, torch.Tensor], dim: int) -> NoTalking:
    """The course's NoTalking, here, holding the parameters read back from the student's side."""
    copy = NoTalking(len(vocab), dim=dim)
    copy.load_state_dict({name: value.float() for name, value in params.items()})
    return copy


def two_sentence_loss(params: dict[str, torch.Tensor], dim: int, sentences: int) -> float:
    """The DiffusionLoss of a NoTalking with these parameters on `sentences` sentences (always the
    same ones: drawn with seed 123)."""
    copy = no_talking(params, dim)
    torch.manual_seed(123)
    x_0 = torch.stack([SamplePInit() for b in range(sentences)])
    with torch.no_grad():
        return DiffusionLoss(copy, x_0, MASK).item()


def held_gradient(net: Any, params: dict[str, torch.Tensor]) -> float:
    """The size (squared norm) of the gradients the student's network holds now."""
    held = 0.0
    for name in params:
        where = net
        for part in name.split("."):
            where = getattr(where, part)
        grad = where.grad.get()
        if grad is not None:
            assert type(grad) is torch.Tensor and grad.shape == params[name].shape, "a strange gradient"
            held += float((grad.double() ** 2).sum())
    return held


def one_batch_gradient(params: dict[str, torch.Tensor], dim: int, batches: int = 8) -> float:
    """The mean norm of the gradient of one batch of 64 sentences, at these parameters."""
    copy = no_talking(params, dim)
    torch.manual_seed(4)
    one = []
    for _ in range(batches):
        copy.zero_grad()
        x_0 = torch.stack([SamplePInit() for _ in range(64)])
        DiffusionLoss(copy, x_0, MASK).backward()
        # every parameter has its gradient after backward()
        one.append(math.sqrt(sum(float((cast(torch.Tensor, p.grad).double() ** 2).sum())
                                 for p in copy.parameters())))
    return sum(one) / len(one)


def trained(TrainTwoSentences: Any, seed: int, dim: int, sentences: int, steps: int) -> tuple:
    """A NoTalking of the course (made on the student's side, seeded with `seed`) trained by the
    student's TrainTwoSentences for `steps` steps: (the network, its loss before, its parameters
    after)."""
    from course.handles import given
    torch.manual_seed(seed)
    net = given("NoTalking")(len(vocab), dim=dim)
    before = two_sentence_loss(net.params(), dim=dim, sentences=sentences)
    TrainTwoSentences(net, steps=steps)
    return net, before, net.params()
