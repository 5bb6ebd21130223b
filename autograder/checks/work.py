"""Does the answer do the work? The gates a property test passes first.

A property (batch = alone, permutation, gradients, device, the rules) holds for many answers that
do nothing: a constant, zeros, an echo of the input. So before a property counts, its test asks
here that the answer computes: the same input gives the same output, another input another output,
and each part the page names (a table, a matrix, a piece) changes the output when it changes. A
gate that fails raises a :class:`~autograder.checks.hints.Hint` naming what does not change, so
the student reads what is wrong, not the property it kept from being checked.
"""
from __future__ import annotations

from typing import Any

import torch

from .hints import Hint


def logits_use(net: Any, V: int, L: int, tables: tuple[str, ...]) -> None:
    """A network's logits for tokens of a vocabulary of V change with the tokens and with each of
    `tables` (its parameters get standard normal values first, kept afterwards)."""
    shapes = net.params(values=False)
    for name in tables:
        if name not in shapes:
            raise Hint(f"your network has no {name}")
    values = {name: torch.randn(t.shape) for name, t in shapes.items()}
    net.set_params(values)
    x = torch.randint(0, V, (2, L))
    base = net(x)
    if type(base) is not torch.Tensor or base.dim() < 1:
        raise Hint("your network gives no logits")

    def same(logits: Any) -> bool:
        if type(logits) is not torch.Tensor or logits.shape != base.shape:
            raise Hint("your network gives no logits")
        return torch.allclose(logits, base, atol=1e-4)
    if not same(net(x)):
        raise Hint("your network's logits change from call to call for the same tokens")
    other = x.clone()
    other[:, 0] = (x[:, 0] + 1) % V
    if same(net(other)):
        raise Hint("your network's logits do not depend on the tokens")
    for name in tables:
        net.set_params({name: torch.randn(shapes[name].shape)})
        if same(net(x)):
            raise Hint(f"your network's logits do not depend on {name}")
        net.set_params({name: values[name]})
