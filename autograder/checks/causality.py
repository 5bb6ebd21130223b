"""Causality, checked once for every notebook that asks for it (08's ``Attention(q, k, v,
causal=True)`` and the pieces that hand the switch on, 09's SelfAttention): does the output at
position i depend on anything at a later position?

It is asked two ways, on tensors whose second index is the position (batch, position, ...):

- by values (:func:`earlier_unchanged`): the inputs at the later positions drawn anew, the outputs
  before them stay as they were;
- by gradient (:func:`site_gradients`, :func:`no_later_derivative`): the derivative of the output at
  i with respect to every input at a later position is exactly zero, not just tiny (a mask applied
  after the softmax looks right by values but leaks a rounding-sized gradient to the future).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

from course.handles import close


def earlier_unchanged(call: Callable[[Any], Any], x: torch.Tensor, out: torch.Tensor, cuts: Iterable[int],
                      redraw: Callable[[torch.Tensor, int], torch.Tensor], atol: float) -> bool:
    """By values: for each cut s, the inputs at positions s onward drawn anew (``redraw(x, s)``, the
    new x[:, s:]) leave the output before s as it was (`out`, what `call` gave for x), within
    `atol`."""
    for s in cuts:
        y = x.clone()
        y[:, s:] = redraw(x, s)
        if not close(call(y)[:, :s], out[:, :s], atol=atol):
            return False
    return True


def site_gradients(vjp: Callable[[torch.Tensor], Any], shape: tuple[int, int, int], sites: Iterable[int],
                   dtype: torch.dtype | None = None) -> Iterator[tuple[int, Any]]:
    """By gradient: for each position i of `sites`, (i, what ``vjp(r)`` gives back: the gradients of
    the inputs) for a cotangent r of the output's `shape` (batch, positions, width) that is random at
    position i and zero elsewhere: the derivative of the output at i alone."""
    B, T, D = shape
    for i in sites:
        r = torch.zeros(B, T, D, dtype=dtype)
        r[:, i] = torch.randn(B, D, dtype=dtype)
        yield i, vjp(r)


def no_later_derivative(i: int, grads: dict[str, torch.Tensor]) -> None:
    """The derivative of the output at position i with respect to each input ({name: its gradient},
    from :func:`site_gradients`) is exactly zero at every position after i."""
    for name, g in grads.items():
        assert (g[:, i + 1:] == 0).all(), f"the output at site {i} has a nonzero derivative (up to " \
            f"{g[:, i + 1:].abs().max().item():.1e}) with respect to {name} at the sites after {i}: your " \
            "attention is not exactly causal"
