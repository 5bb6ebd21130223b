"""Reference pieces: what the page's (and the chapter's) networks compute, written out here from
values the check set. Pure functions of the grader's own inputs, never of the student's outputs.
"""
from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from course.handles import close


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


def layer_norm(values: dict[str, torch.Tensor], z: torch.Tensor, prefix: str = "") -> torch.Tensor:
    """z through the nn.LayerNorm(dim) whose scale and shift the check set (eps 1e-5)."""
    assert prefix + "weight" in values and prefix + "bias" in values, f"a norm {prefix}has no scale or shift"
    return F.layer_norm(z, (z.shape[-1],), values[prefix + "weight"], values[prefix + "bias"], eps=1e-5)


def layer_norm_by_hand(x: torch.Tensor) -> torch.Tensor:
    """(x - mean) / std over the last index (the biased std), as nn.LayerNorm without its scale and
    shift, written out."""
    centred = x - x.mean(dim=-1, keepdim=True)
    return centred / centred.pow(2).mean(dim=-1, keepdim=True).sqrt()


LINEAR = f"{torch.nn.Linear.__module__}.{torch.nn.Linear.__qualname__}"


def mlp_layers(modules: dict[str, list[str]], values: dict[str, torch.Tensor], dim: int) -> list[tuple]:
    """The two nn.Linear layers of a block's mlp, by the modules() of the student's mlp and the
    values the check set: (first, second) prefixes, in each order that goes from dim to a width
    and back to dim."""
    paths = [p for p, classes in modules.items() if LINEAR in classes]
    assert len(paths) == 2, f"the mlp has {len(paths)} nn.Linear layers, not 2"
    prefixes = [f"{p}." if p else "" for p in paths]
    assert all(values.get(p + "weight") is not None for p in prefixes), \
        "an nn.Linear of the mlp has no weight"
    fits = [(a, b) for a, b in (prefixes, prefixes[::-1])
            if values[a + "weight"].shape[1] == dim and values[b + "weight"].shape[0] == dim
            and values[a + "weight"].shape[0] == values[b + "weight"].shape[1]]
    assert fits, f"the mlp's two nn.Linear layers do not go from {dim} to a width and back to {dim}"
    return fits


def mlp(values: dict[str, torch.Tensor], layers: tuple, z: torch.Tensor) -> Any:
    """The page's mlp: Linear, GELU, Linear, with the layers (first, second) of `values`."""
    return linear(values, layers[1], F.gelu(linear(values, layers[0], z)))


def block(pieces: dict[str, dict], layers: tuple, x: torch.Tensor, heads: int) -> Any:
    """The page's Block: x + attention(norm1(x)), then + mlp(norm2(...)), with the values of its
    pieces (`pieces`: norm1, attention, norm2, mlp, each {name: tensor}) and its mlp's `layers`."""
    h = x + multihead(pieces["attention"], layer_norm(pieces["norm1"], x), heads)[0]
    return h + mlp(pieces["mlp"], layers, layer_norm(pieces["norm2"], h))


def my_transformer(values: dict, x: torch.Tensor, heads: int) -> Any:
    """The page's MyTransformer with its position table zero: out(norm(blocks(embed[x]))), from the
    values the check set ({"embed", "norm", "out": {name: tensor}, "blocks": [{name: tensor}]}), each
    block the page's Block(dim, heads) (a KeyError when a block lacks one of its parameters)."""
    names = {"norm1": ["weight", "bias"], "norm2": ["weight", "bias"],
             "mlp": ["0.weight", "0.bias", "2.weight", "2.bias"],
             "attention": [f"heads.{j}.{m}.weight" for j in range(heads) for m in "QKV"]
             + ["mix.weight", "mix.bias"]}
    h = values["embed"]["weight"][x]
    for kept in values["blocks"]:
        pieces = {piece: {n: kept[f"{piece}.{n}"] for n in names[piece]} for piece in names}
        h = block(pieces, ("0.", "2."), h, heads)
    return linear(values["out"], "", layer_norm(values["norm"], h))


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> tuple:
    """08's Attention(q, k, v, causal=False): with `causal`, the energies with j > i are -inf
    before the softmax (the mask made on q's device)."""
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1), -math.inf)
    probs = torch.softmax(dots, dim=-1)
    return probs @ v, probs


causal_attention.__qualname__ = causal_attention.__name__ = "reference_attention"


def scale_used(weights: Any, q: torch.Tensor, k: torch.Tensor, scales: dict[str, float]) -> str | None:
    """Which of `scales` ({how a student would write it: the number}) weights are the softmax of
    q k^T divided by, if any: what to tell a student whose scale is wrong."""
    for written, scale in scales.items():
        if close(weights, torch.softmax(q @ k.transpose(-2, -1) / scale, dim=-1), atol=1e-5, rtol=1e-4):
            return written
    return None
