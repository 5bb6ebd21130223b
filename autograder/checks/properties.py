"""Properties every correct answer has, checked on the student's own pieces: each is written once
here and named after what it asks.
"""
from __future__ import annotations

from typing import Any

import torch

from course.checking import rows_add_to_one
from course.handles import close, watching


def on_another_device(call: Any, *args: Any, mixing: str = "", **kwargs: Any) -> Any:
    """What `call` makes of arguments on another device (``meta``: shapes and devices, no numbers),
    described (device, dtype, shape) rather than sent; fails with `mixing` when its work mixed that
    device with the CPU (a tensor made in forward without ``device=``)."""
    with watching() as seen:
        described = call.describe(*args, **kwargs)
    assert not seen.mixed_devices, mixing or f"mixed devices in {sorted(seen.mixed_devices)}"
    return described


def _outputs(answer: Any, n: int, piece: str) -> tuple:
    """What a piece returned, as a tuple of `n` things (`n` = 1: the answer itself)."""
    if n == 1:
        return (answer,)
    assert type(answer) in (tuple, list) and len(answer) == n, f"{piece} does not return {n} things"
    return tuple(answer)


def rows_are_probabilities(weights: Any, L: int) -> None:
    """(L, L) weights whose rows are probability distributions: no negative entry, adding up to one."""
    assert type(weights) is torch.Tensor and tuple(weights.shape) == (L, L), \
        f"weights of shape {tuple(getattr(weights, 'shape', ()))} for L = {L}"
    assert (weights >= 0).all(), "negative weights"
    rows_add_to_one(weights, L)


def batch_is_alone(call: Any, inputs: tuple, outputs: tuple, indices: list, atol: float = 1e-5,
                   rtol: float = 1e-5) -> None:
    """Each sentence of a batch (its `index` in the batch dimensions) gives what it gives alone:
    `outputs` (what `call` gave for the batched `inputs`) at `index` against `call` on the inputs
    at `index`, for every output (the output, the weights...)."""
    for index in indices:
        alone = _outputs(call(*(x[index] for x in inputs)), len(outputs), "your code")
        for got, one in zip(outputs, alone, strict=True):
            assert close(got[index], one, atol=atol, rtol=rtol), \
                "a sentence of the batch differs from the same sentence alone"


def permutation(call: Any, inputs: tuple, perm: torch.Tensor, site: int = 0, weights: bool = False,
                atol: float = 1e-5, rtol: float = 1e-5) -> None:
    """Shuffling the sites of the inputs (dimension `site`: 0, or 1 after a batch dimension) shuffles
    the output the same way, and the weights (the second output, with `weights`) by rows and
    columns."""
    def shuffle(t: Any) -> Any:
        return t[perm] if site == 0 else t[:, perm]
    n = 2 if weights else 1
    before = _outputs(call(*inputs), n, "your code")
    after = _outputs(call(*(shuffle(x) for x in inputs)), n, "your code")
    assert close(after[0], shuffle(before[0]), atol=atol, rtol=rtol), \
        "the shuffled output is not the output shuffled"
    if weights:
        assert close(after[1], before[1][perm][:, perm], atol=atol, rtol=rtol), \
            "the shuffled weights are not the weights shuffled"


def slope_agrees(got: float, output_at: Any, r: torch.Tensor, eps: float, message: str) -> None:
    """A gradient, dotted with a direction (`got`), agrees with the slope of the output measured by
    finite differences along it: `output_at(h)` is the output a step h along the direction, and the
    slope is that of (output * r).sum(), r the cotangent the gradient was taken with."""
    plus = output_at(eps)
    minus = output_at(-eps)
    slope = float(((plus - minus) * r).sum()) / (2 * eps)
    assert abs(got - slope) < 1e-5 * (1 + abs(slope)), message


def and_weights(piece: Any) -> Any:
    """A call of `piece` that gives (output, piece.weights): a head and the weights it saved."""
    def call(*args: Any) -> tuple:
        return piece(*args), piece.weights.get()
    return call


def keeps_shape(Piece: Any, sizes: list[tuple], what: str) -> None:
    """Piece(dim, heads), with the reference Attention in place of the notebook's, gives back the
    shape of its input, for a batch (batch, L, dim) and for one sentence (L, dim)."""
    from .reference import attention
    for dim, heads, batch, L in sizes:
        piece = Piece(dim, heads)
        with piece.swapped(Attention=attention):
            out = piece(torch.randn(batch, L, dim))
            assert tuple(out.shape) == (batch, L, dim), \
                f"{what}({dim}, {heads}) on a batch of shape {(batch, L, dim)} gave {tuple(out.shape)}"
            out = piece(torch.randn(L, dim))
            assert tuple(out.shape) == (L, dim), \
                f"{what}({dim}, {heads}) on one sentence of shape {(L, dim)} gave {tuple(out.shape)}"
