"""09's checks that the student writes (SameAsPyTorch, NoPeeking, StartingLoss), run on networks of
the check's own: attentions with a known bug or none, models that peek or do not, models whose
loss the check computes. A check the student wrote earns its points by telling them apart.
"""
from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from course.handles import close

from ..answers import truth

BUGS = {None: "without a bug", "no mask": "without the mask",
        "scale": "that divides by sqrt(D), not sqrt(d)", "cut": "that cuts the heads with view(B, H, T, d)",
        "join": "that joins the heads without transposing back",
        "mask the wrong way": "whose mask points the wrong way",
        "keys for queries": "that takes the keys for the queries",
        "softmax over the queries": "with the softmax over the wrong index"}


def suspect(P: dict, x: torch.Tensor, H: int, bug: str | None = None) -> torch.Tensor:
    """What a causal attention with the weights P computes on x, per head, in double precision, with
    `bug` (one of BUGS) or none."""
    B, T, D = x.shape
    d = D // H
    W = {name: t.double() for name, t in P.items()}
    q, k, v = (x.double() @ W["qkv.weight"].T + W["qkv.bias"]).split(D, dim=-1)
    if bug == "keys for queries":
        q, k = k, q

    def heads(t: torch.Tensor) -> torch.Tensor:
        return t.reshape(B, H, T, d) if bug == "cut" else t.reshape(B, T, H, d).transpose(1, 2)
    q, k, v = heads(q), heads(k), heads(v)
    hears = torch.ones(T, T, dtype=torch.bool).tril()
    hears = hears.T if bug == "mask the wrong way" else hears
    dots = q @ k.transpose(-2, -1) / math.sqrt(D if bug == "scale" else d)
    dots = dots if bug == "no mask" else dots.masked_fill(~hears, -math.inf)
    y = dots.softmax(dim=-2 if bug == "softmax over the queries" else -1) @ v
    joined = y.reshape(B, T, D) if bug == "join" else y.transpose(1, 2).reshape(B, T, D)
    return joined @ W["out.weight"].T + W["out.bias"]


def same_as_pytorch(SameAsPyTorch: Any, attn: Any, P: dict, x: torch.Tensor, H: int,
                    bug: str | None) -> Any:
    """(what the student's SameAsPyTorch says about a GIVEN Suspect whose attention is
    suspect(P, ., H, bug), what it should say); None when the bug changes the numbers too little to
    call. The Suspect's forward hands its work to SuspectAttention, which the check computes."""
    gap = (suspect(P, x, H, bug) - suspect(P, x, H)).abs().max().item()
    if 1e-7 <= gap <= 1e-3:
        return None
    with SameAsPyTorch.swapped(SuspectAttention=lambda attn, x: suspect(P, x, H, bug).to(x.dtype)):
        if not close(attn(x), suspect(P, x, H, bug).to(x.dtype), atol=1e-6):
            raise AssertionError("the GIVEN Suspect does not hand its forward to SuspectAttention: run its "
                                 "cell as given")
        return truth(SameAsPyTorch(attn, x), "SameAsPyTorch"), gap < 1e-7


def broken_first(bugs: tuple) -> tuple:
    """The bugs with the attention without one (None) last: a check that calls the first attention it
    sees right and compares every later one with it (no reference computed) is asked about a broken
    one first, and says it is right."""
    return tuple(b for b in bugs if b is not None) + tuple(b for b in bugs if b is None)


def judges_suspects(Config: Any, Suspect: Any, SameAsPyTorch: Any, sizes: list, bugs: tuple) -> int:
    """The student's SameAsPyTorch on GIVEN Suspects of each of `sizes` (B, T, D, H, C) with each of
    `bugs`: it must say True for the right ones and False for the others. Returns how many broken
    ones it was asked about. The broken ones come first (:func:`broken_first`)."""
    from .chapter import nontrivial
    broken = 0
    for B, T, D, H, C in sizes:
        attn = Suspect(Config(vocab_size=5, context=C, dim=D, heads=H, layers=1, dropout=0.0)).eval()
        P = nontrivial(attn.params(values=False))
        attn.set_params(P)
        x = torch.randn(B, T, D)
        for bug in broken_first(bugs):
            found = same_as_pytorch(SameAsPyTorch, attn, P, x, H, bug)
            if found is not None:
                said, right = found
                broken += not right
                assert said == right, f"B={B}, T={T}, dim={D}, heads={H}: for an attention {BUGS[bug]} " \
                    f"your SameAsPyTorch said {said}"
    return broken


class Peeking(torch.nn.Module):
    """Logits at site i from the tokens at sites 0..i (a running mean of their vectors); with `peek`,
    plus `size` times what it should not see: the next token, the last one, or all of them."""

    def __init__(self, V: int, peek: str | None = None, size: float = 1.0, loud_last: bool = False) -> None:
        super().__init__()
        self.E, self.W = torch.randn(V, 8), torch.randn(8, V)
        self.peek, self.size, self.loud_last = peek, size, loud_last

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        e = self.E[ids]
        T = ids.shape[-1]
        seen = torch.ones(T, T).tril() @ e / torch.arange(1, T + 1).unsqueeze(-1)
        unseen = {"next": lambda: torch.cat([e[..., 1:, :], torch.zeros_like(e[..., :1, :])], dim=-2),
                  "last": lambda: e[..., -1:, :], "all": lambda: e.mean(dim=-2, keepdim=True)}
        if self.peek in unseen:
            seen = seen + self.size * unseen[self.peek]()
        out = seen @ self.W
        if self.loud_last:
            out[..., -1, :] *= 100
        return out


def no_peeking(NoPeeking: Any, model: Peeking, a: torch.Tensor, b: torch.Tensor) -> tuple:
    """(what the student's NoPeeking says, what it should say: the logits before the last site agree)."""
    right = torch.allclose(model(a)[:, :-1], model(b)[:, :-1], atol=1e-5)
    return truth(NoPeeking(model, a, b), "NoPeeking"), right


def last_token_differs(B: int, T: int, V: int) -> tuple:
    """Token ids a and b of shape (B, T) that differ only in their last token."""
    a = torch.randint(0, V, (B, T))
    b = a.clone()
    b[:, -1] = (a[:, -1] + torch.randint(1, V, (B,))) % V
    return a, b


class Sure(torch.nn.Module):
    """Logits from two tables the check drew, about `scale` times standard normal each."""

    def __init__(self, V: int, scale: float) -> None:
        super().__init__()
        self.E, self.W = torch.randn(V, 16), scale * torch.randn(16, V) / 4

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.E[ids] @ self.W


def cross_entropy(model: torch.nn.Module, ids: torch.Tensor, targets: torch.Tensor) -> float:
    """The loss of `model` on ids against targets, computed here in double precision."""
    out = model(ids).double()
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), targets.reshape(-1)).item()
