"""Reference pieces: what the page's (and the chapter's) networks compute, written out here from
values the check set. Pure functions of the grader's own inputs, never of the student's outputs
(a piece of the student's that the check calls as it is is handed in as a function).

Where the student's network lacks what a reference piece needs (a parameter, a layer of the right
width), the piece fails with a :class:`~autograder.checks.hints.Hint` saying so: that gate failed,
not the property the test checks.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch
import torch.nn.functional as F

from course.handles import close

from .hints import Hint


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
    if values.get(prefix + "weight") is None:
        raise Hint(f"{prefix or 'a layer '}weight is missing where the check expects it")
    w = values[prefix + "weight"]
    if w.dim() != 2 or w.shape[1] != z.shape[-1]:
        raise Hint(f"{prefix or 'a layer '}weight does not take vectors of length {z.shape[-1]}")
    return z @ w.T + values.get(prefix + "bias", 0)


def multihead(values: dict[str, torch.Tensor], x: torch.Tensor, heads: int, prefix: str = "") -> tuple:
    """The page's MultiHead with the parameters `values` (heads.i.Q.weight, ..., mix.weight,
    mix.bias, after `prefix`): (its output, [each head's weights])."""
    return heads_and_mix(values, x, [f"{prefix}heads.{i}." for i in range(heads)], f"{prefix}mix.")


def heads_and_mix(values: dict[str, torch.Tensor], x: torch.Tensor, heads: list[str], mix: str) -> tuple:
    """MultiHead's maths with its parameters under any names: the heads (each the prefix of its Q,
    K and V weights), their outputs side by side in that order, then the nn.Linear `mix`: (its
    output, [each head's weights])."""
    outs, weights = [], []
    for at in heads:
        out, w = attention(*(linear(values, f"{at}{m}.", x) for m in "QKV"))
        outs.append(out)
        weights.append(w)
    return linear(values, mix, torch.cat(outs, dim=-1)), weights


def layer_norm(values: dict[str, torch.Tensor], z: torch.Tensor, prefix: str = "") -> torch.Tensor:
    """z through the nn.LayerNorm(dim) whose scale and shift the check set (eps 1e-5)."""
    if values.get(prefix + "weight") is None or values.get(prefix + "bias") is None:
        raise Hint(f"a norm {prefix}has no scale or shift")
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
    if len(paths) != 2:
        raise Hint(f"the mlp has {len(paths)} nn.Linear layers, not 2")
    prefixes = [_prefix(p) for p in paths]
    if any(values.get(p + "weight") is None for p in prefixes):
        raise Hint("an nn.Linear of the mlp has no weight")
    fits = [(a, b) for a, b in (prefixes, prefixes[::-1]) if _widens(values, a, b, dim)]
    if not fits:
        raise Hint(f"the mlp's two nn.Linear layers do not go from {dim} to a width and back to {dim}")
    return fits


def _prefix(path: str) -> str:
    """The prefix of a module's parameters, from its path in modules() ("" for the module itself)."""
    return f"{path}." if path else ""


def _widens(values: dict[str, torch.Tensor], first: str, second: str, dim: int) -> bool:
    """Do the nn.Linear layers `first` then `second` go from dim to a width and back to dim?"""
    a, b = values[first + "weight"], values[second + "weight"]
    return (a.dim() == 2 and b.dim() == 2 and a.shape[1] == dim and b.shape[0] == dim
            and a.shape[0] == b.shape[1])


def mlp(values: dict[str, torch.Tensor], layers: tuple, z: torch.Tensor) -> Any:
    """The page's mlp: Linear, GELU, Linear, with the layers (first, second) of `values`."""
    return linear(values, layers[1], F.gelu(linear(values, layers[0], z)))


def block(pieces: dict[str, dict], layers: tuple, x: torch.Tensor, heads: int) -> Any:
    """The page's Block: x + attention(norm1(x)), then + mlp(norm2(...)), with the values of its
    pieces (`pieces`: norm1, attention, norm2, mlp, each {name: tensor}) and its mlp's `layers`."""
    h = x + multihead(pieces["attention"], layer_norm(pieces["norm1"], x), heads)[0]
    return h + mlp(pieces["mlp"], layers, layer_norm(pieces["norm2"], h))


NORM = f"{torch.nn.LayerNorm.__module__}.{torch.nn.LayerNorm.__qualname__}"


@dataclass(frozen=True)
class BlockPieces:
    """Where a block of any making keeps the page's pieces, as prefixes of its parameter names
    ("ln1.", "ffn.0."): its two norms (in modules() order; either may come first in the maths),
    its mlp's first and second nn.Linear, and its attention: its heads (each the prefix of its Q, K
    and V weights) and the nn.Linear that mixes them when it has the page's heads, else the path of
    the module that holds every other parameter of the block, which the check calls as it is."""

    norms: tuple[str, str]
    mlp: tuple[str, str]
    heads: tuple[str, ...] = ()
    mix: str = ""
    attention_module: str | None = None


def block_pieces(modules: dict[str, list[str]], values: dict[str, torch.Tensor], dim: int,
                 heads: int) -> BlockPieces:
    """The page's pieces in a block, found from what the block reports (modules(), its parameter
    values), whatever it names them and in whatever order it made them. A Hint when a piece is not
    there: two nn.LayerNorm(dim), two nn.Linear going from dim to a width and back (the mlp), and
    the attention's parameters."""
    norms = [_prefix(p) for p, classes in modules.items() if NORM in classes]
    if len(norms) != 2 or any(values.get(n + "weight") is None or tuple(values[n + "weight"].shape) != (dim,)
                              for n in norms):
        raise Hint(f"your blocks should have two nn.LayerNorm({dim}), yours have {len(norms)}: make them "
                   "with the given Block(dim, heads)")
    linears = [_prefix(p) for p, classes in modules.items()
               if LINEAR in classes and values.get(_prefix(p) + "weight") is not None]
    mlp = _the_mlp(linears, values, dim)
    rest = [n for n in values if not n.startswith((*norms, *mlp))]
    if not rest:
        raise Hint("your blocks have no attention: make them with the given Block(dim, heads)")
    found = BlockPieces((norms[0], norms[1]), mlp)
    at = [n.removesuffix("Q.weight") for n in rest if n == "Q.weight" or n.endswith(".Q.weight")]
    at = [h for h in at if all(f"{h}{m}.weight" in values for m in "KV")]
    others = [n for n in rest if not any(n == f"{h}{m}.weight" for h in at for m in "QKV")]
    mixes = [p for p in linears if p + "weight" in others and tuple(values[p + "weight"].shape) == (dim, dim)]
    if len(at) == heads and len(mixes) == 1 and all(n.startswith(mixes[0]) for n in others):
        return replace(found, heads=tuple(at), mix=mixes[0])      # the page's heads, under any names
    holders = [p for p in modules if p and all(n.startswith(_prefix(p)) for n in rest)
               and not any(piece.startswith(_prefix(p)) for piece in (*norms, *mlp))]
    if not holders:
        raise Hint("the grader cannot find your blocks' attention (a module of its own, or heads with Q, K "
                   "and V and a layer that mixes them): make them with the given Block(dim, heads)")
    return replace(found, attention_module=max(holders, key=len))


def _the_mlp(linears: list[str], values: dict[str, torch.Tensor], dim: int) -> tuple[str, str]:
    """The two nn.Linear of a block's mlp, first and second: of the pairs that go from dim to a
    width and back, the one whose two layers are all a module of their own holds (an nn.Sequential,
    an MLP class), else the one of the page's width, 4 * dim."""
    pairs = [(a, b) for a in linears for b in linears if a != b and _widens(values, a, b, dim)]

    def alone(pair: tuple[str, str]) -> bool:
        parents = {p[:-1].rpartition(".")[0] for p in pair}
        if len(parents) != 1:
            return False
        within = _prefix(parents.pop())
        return {n for n in linears if n.startswith(within)} == set(pair)
    for keep in (alone, lambda pair: values[pair[0] + "weight"].shape[0] == 4 * dim):
        if len(pairs) > 1:
            pairs = [pair for pair in pairs if keep(pair)] or pairs
    if len(pairs) != 1:
        raise Hint(f"the grader cannot find your blocks' mlp (nn.Linear({dim}, {4 * dim}), nn.GELU(), "
                   f"nn.Linear({4 * dim}, {dim})): make them with the given Block(dim, heads)")
    return pairs[0]


def own_block(pieces: BlockPieces, values: dict[str, torch.Tensor], x: torch.Tensor,
              attention: Callable[[torch.Tensor], Any] | None = None) -> list[Any]:
    """What the page's Block computes on x with a block's own values, found by :func:`block_pieces`:
    one answer for each order of its two norms (either may be the one before the attention). The
    attention is the page's, from the values of the block's heads and mix, or `attention` (the
    block's own attention module, called as it is) when the block's attention is of its own making."""
    talk: Callable[[torch.Tensor], Any]
    if pieces.heads:
        def talk(z: torch.Tensor) -> Any:
            return heads_and_mix(values, z, list(pieces.heads), pieces.mix)[0]
    elif attention is not None:
        talk = attention
    else:
        raise ValueError("a block whose attention is its own needs the attention to call")
    answers = []
    for first, second in (pieces.norms, pieces.norms[::-1]):
        said = talk(layer_norm(values, x, first))
        if type(said) in (tuple, list) and said:       # an attention that also returns its weights
            said = said[0]
        if type(said) is not torch.Tensor or tuple(said.shape) != tuple(x.shape):
            raise Hint("your blocks' attention does not give vectors of the shape of its input")
        h = x + said
        answers.append(h + mlp(values, pieces.mlp, layer_norm(values, h, second)))
    return answers


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


def causal_attention_any_keywords(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                                  **_others: Any) -> tuple:
    """:func:`causal_attention` for a check of something other than how a Head calls Attention (the
    device a network works on): a keyword of the student's own Attention (``mask=``) is not that
    check's business, and has cost its points in the Head's own tests already."""
    return causal_attention(q, k, v, causal)


causal_attention_any_keywords.__qualname__ = causal_attention_any_keywords.__name__ = "reference_attention"


def scale_used(weights: Any, q: torch.Tensor, k: torch.Tensor, scales: dict[str, float]) -> str | None:
    """Which of `scales` ({how a student would write it: the number}) weights are the softmax of
    q k^T divided by, if any: what to tell a student whose scale is wrong."""
    for written, scale in scales.items():
        if close(weights, torch.softmax(q @ k.transpose(-2, -1) / scale, dim=-1), atol=1e-5, rtol=1e-4):
            return written
    return None
