"""Parameters: their shapes and counts as the student's network reports them, and values the check
draws and sets, so that expected numbers come from what the grader knows.

Every drawing function draws, parameter by parameter in the network's order, one tensor of
standard normal numbers, scaled: a check that draws the same way twice sees the same numbers.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch


def shapes(net: Any) -> dict[str, tuple]:
    """{name: shape} of the trainable parameters (without their values)."""
    return {name: tuple(t.shape) for name, t in net.params(values=False).items()}


def count(net_shapes: dict[str, tuple]) -> int:
    """How many numbers parameters of these shapes hold."""
    return sum(math.prod(s) for s in net_shapes.values())


def rows(net_shapes: dict, name: str, length: int) -> int:
    """`length`, cut to the rows of the table `name` when the network has one of another size
    (so that a table of the wrong size costs the points of the test that counts, not of every test
    that looks rows up in it)."""
    table = net_shapes.get(name)
    if table is not None and table.dim() == 2:
        return max(1, min(length, table.shape[0]))
    return length


def normal(net_shapes: dict) -> dict[str, torch.Tensor]:
    """Standard normal numbers for every parameter."""
    return {name: torch.randn(t.shape) for name, t in net_shapes.items()}


def scaled(net_shapes: dict, matrix: float = 1.5, weight: tuple = (0.0, 0.5), bias: tuple = (0.0, 0.5),
           dtype: torch.dtype | None = None, keep: Callable[[str], bool] | None = None,
           vectors_too: bool = False) -> dict:
    """Numbers of a healthy size for every parameter (that `keep` keeps): a matrix (and, with
    `vectors_too`, a vector as well) `matrix` times standard normal over the square root of its
    input width; a vector whose name ends in "weight" `weight[0] + weight[1]` times standard
    normal (LayerNorm scales around one), any other vector `bias[0] + bias[1]` times standard normal."""
    values = {}
    for name, t in net_shapes.items():
        if keep is not None and not keep(name):
            continue
        kind: dict[str, Any] = {} if dtype is None else {"dtype": dtype}    # randn's keywords
        if t.dim() > 1 or vectors_too:
            values[name] = matrix * torch.randn(t.shape, **kind) / math.sqrt(t.shape[-1])
        else:
            shift, size = weight if name.endswith("weight") else bias
            drawn = size * torch.randn(t.shape, **kind)
            values[name] = shift + drawn if shift else drawn
    return values


def put(net: Any, values: dict) -> dict:
    """Set `values` in the student's network; return them."""
    net.set_params(values)
    return values


def module_at(net: Any, path: str) -> Any:
    """The handle of the piece at `path` of the network's modules() ("ffn.0": attribute ffn, item 0)."""
    for step in path.split(".") if path else ():
        net = net[int(step) if step.isdigit() else step]    # a name: an attribute, there
    return net
