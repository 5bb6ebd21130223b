"""Reference pieces: what the page's (and the chapter's) networks compute, written out here from
values the check set. Pure functions of the grader's own inputs, never of the student's outputs.
"""
from __future__ import annotations

import math
from typing import Any

import torch


def word_logits(values: dict[str, torch.Tensor], x: torch.Tensor) -> Any:
    """WithPosition without its positions: out(embed[x])."""
    return values["embed.weight"][x] @ values["out.weight"].T + values.get("out.bias", 0)


def position_logits(values: dict[str, torch.Tensor], L: int) -> torch.Tensor:
    """What WithPosition's positions add to the logits of a sentence of length L: out.weight of
    the position vectors 0..L-1."""
    return values["position.weight"][:L] @ values["out.weight"].T


def attention_weights(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) over the keys, d the length of the queries."""
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)


def reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple:
    """The page's Attention(q, k, v): (weights @ v, weights). Swapped in for the notebook's own
    Attention (``with head.swapped(Attention=reference.attention)``), it is named as the notebook
    names it in what the student reads."""
    weights = attention_weights(q, k)
    return weights @ v, weights


attention = reference_attention


def head(values: dict[str, torch.Tensor], x: torch.Tensor) -> tuple:
    """The page's Head with the matrices `values` (Q.weight, K.weight, V.weight, no biases):
    (output, weights) of the reference Attention on x's queries, keys and values."""
    q, k, v = (x @ values[f"{m}.weight"].T for m in "QKV")
    weights = attention_weights(q, k)
    return weights @ v, weights


def linear(values: dict[str, torch.Tensor], prefix: str, z: torch.Tensor) -> Any:
    """z through the nn.Linear whose parameters the check set (`prefix` + weight, bias)."""
    assert prefix + "weight" in values, f"{prefix or 'a layer '}weight is missing where the check expects it"
    w = values[prefix + "weight"]
    assert w.dim() == 2 and w.shape[1] == z.shape[-1], \
        f"{prefix or 'a layer '}weight does not take vectors of length {z.shape[-1]}"
    return z @ w.T + values.get(prefix + "bias", 0)


def multihead(values: dict[str, torch.Tensor], x: torch.Tensor, heads: int, prefix: str = "") -> tuple:
    """The page's MultiHead with the parameters `values` (heads.i.Q.weight, ..., mix.weight,
    mix.bias, after `prefix`): (its output, [each head's weights])."""
    outs, weights = [], []
    for i in range(heads):
        out, w = attention(*(linear(values, f"{prefix}heads.{i}.{m}.", x) for m in "QKV"))
        outs.append(out)
        weights.append(w)
    return linear(values, f"{prefix}mix.", torch.cat(outs, dim=-1)), weights
