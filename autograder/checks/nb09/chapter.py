"""09, the chapter's GPT: what its pieces compute, written out from the weights the check set, and
the gates its tests pass first (does the attention, the MLP, the block, the GPT do the work?).

The chapter keeps its queries, keys and values in one matrix, qkv.weight (rows 0..D for the
queries, D..2D the keys, 2D..3D the values), cut into H heads of d = D // H; its mask lets site i
hear the sites j <= i; its blocks are pre-norm; its head is tied to the token table.
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F

from course.handles import close

from ..hints import Hint


def nontrivial(shapes: dict) -> dict[str, torch.Tensor]:
    """Values with some life in them for every weight and bias (a mask buffer is left alone): a
    bias 0.3 times standard normal, a LayerNorm's scale about one, a matrix 1.5 times standard normal
    over the square root of its input width (each in the dtype the network keeps it in)."""
    values = {}
    for name, t in shapes.items():
        if t.is_floating_point() and name.endswith(("weight", "bias")):
            drawn = torch.randn(t.shape, dtype=t.dtype)
            values[name] = 0.3 * drawn if name.endswith("bias") else \
                1 + 0.3 * drawn if t.dim() == 1 else 1.5 * drawn / math.sqrt(t.shape[-1])
    return values


def differs(a: Any, b: Any) -> bool:
    """Two tensors of one shape that do not hold the same numbers."""
    return type(a) is torch.Tensor and type(b) is torch.Tensor and tuple(a.shape) == tuple(b.shape) \
        and not close(a, b, atol=1e-6, rtol=0)


# ------------------------------------------------------------------ what the chapter's pieces compute

def heads_joined(P: dict, x: torch.Tensor, H: int, allowed: torch.Tensor, prefix: str = "") -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v for every head of the attention whose weights are P[prefix + ...],
    each site hearing the sites `allowed` lets it, the heads side by side again (before self.out)."""
    B, T, D = x.shape
    d = D // H
    qkv = x @ P[prefix + "qkv.weight"].T + P[prefix + "qkv.bias"]
    q, k, v = (qkv[..., s * D:(s + 1) * D].reshape(B, T, H, d).transpose(1, 2) for s in range(3))
    dots = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~allowed, -math.inf)
    return (dots.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, D)


def attention(P: dict, x: torch.Tensor, H: int, allowed: torch.Tensor) -> torch.Tensor:
    """SelfAttention with the weights P (what F.scaled_dot_product_attention computes, written out)."""
    return heads_joined(P, x, H, allowed) @ P["out.weight"].T + P["out.bias"]


def mlp(P: dict, x: torch.Tensor) -> torch.Tensor:
    """The chapter's MLP with the weights P: down(gelu(up(x)))."""
    return F.gelu(x @ P["up.weight"].T + P["up.bias"]) @ P["down.weight"].T + P["down.bias"]


def logits(P: dict, ids: torch.Tensor, H: int, layers: int) -> torch.Tensor:
    """What the chapter's GPT computes with the weights P (the tied table once, as tokens.weight):
    causal, pre-norm blocks, the head the token table."""
    T = ids.shape[1]
    h = P["tokens.weight"][ids] + P["positions.weight"][:T]
    D = h.shape[-1]
    hears = ~torch.ones(T, T, dtype=torch.bool).triu(1)
    for i in range(layers):
        at = f"blocks.{i}."
        a = F.layer_norm(h, (D,), P[at + "norm1.weight"], P[at + "norm1.bias"])
        y = heads_joined(P, a, H, hears, at + "attn.")
        h = h + y @ P[at + "attn.out.weight"].T + P[at + "attn.out.bias"]
        m = F.layer_norm(h, (D,), P[at + "norm2.weight"], P[at + "norm2.bias"])
        m = F.gelu(m @ P[at + "mlp.up.weight"].T + P[at + "mlp.up.bias"])
        h = h + m @ P[at + "mlp.down.weight"].T + P[at + "mlp.down.bias"]
    return F.layer_norm(h, (D,), P["norm.weight"], P["norm.bias"]) @ P["tokens.weight"].T


# ------------------------------------------------------------------ does it do the work?

def hears(attn: Any, x: torch.Tensor) -> tuple:
    """The attention's output, and allowed[i, j]: does output site i change when input site j
    changes? (The mask as the student's attention applies it, whatever it is.)"""
    base = attn(x)
    if type(base) is not torch.Tensor or tuple(base.shape) != tuple(x.shape):
        raise Hint(f"for x of shape {tuple(x.shape)} the output of your attention should have that shape")
    T = x.shape[1]
    allowed = torch.zeros(T, T, dtype=torch.bool)
    for j in range(T):
        moved = x.clone()
        moved[:, j] += torch.randn(x.shape[0], x.shape[2], dtype=x.dtype)
        change = attn(moved) - base
        allowed[:, j] = change.abs().amax(dim=(0, 2)) > 1e-9
    if not close(attn(x), base, atol=1e-9, rtol=0):
        raise Hint("your attention gives two different outputs for the same input (in eval() mode)")
    if not bool(allowed.any(dim=1).all()):
        raise Hint("some sites of your attention's output do not change whatever the input: does it compute "
                   "anything?")
    if not (T < 2 or int(allowed.sum()) > T):
        raise Hint("no site of your attention hears another site: each output depends on its own site only")
    return base, allowed


def as_written(Config: Any, SelfAttention: Any, B: int, T: int, D: int, H: int, C: int) -> bool:
    """A SelfAttention of H heads (context C, in double precision) with weights the check set gives,
    for x of shape (B, T, D), what the chapter's attention computes with the mask it applies."""
    cfg = Config(vocab_size=5, context=C, dim=D, heads=H, layers=1, dropout=0.0)
    attn = SelfAttention(cfg).double().eval()
    values = nontrivial(attn.params(values=False))
    attn.set_params(values)
    x = torch.randn(B, T, D, dtype=torch.float64)
    out, allowed = hears(attn, x)           # which sites the mask lets each site hear, whatever it is
    return close(out, attention(values, x, H, allowed), atol=1e-8, rtol=1e-6)


def attends(attn: Any, values: dict, x: torch.Tensor) -> torch.Tensor:
    """Does the attention do the work? Its output is a tensor shaped like x, the same for the same
    x; it changes when x changes, when the queries and keys change (rows 0 to 2D of qkv.weight),
    when the values change (rows 2D to 3D) and when out.weight changes; and some site hears another.
    (x has two sites or more; the weights were set to `values`, and are put back.)"""
    base = attn(x)
    if type(base) is not torch.Tensor or tuple(base.shape) != tuple(x.shape):
        raise Hint(f"your attention should give back a tensor of the shape of its input, {tuple(x.shape)}")
    if not close(attn(x), base, atol=1e-6, rtol=0):
        raise Hint("your attention gives two different outputs for the same input (in eval() mode)")
    if not differs(attn(x + torch.randn_like(x)), base):
        raise Hint("the output of your attention does not change when its input changes")
    D = x.shape[-1]
    for name, rows, what in (("qkv.weight", slice(0, 2 * D),
                              "the queries and keys (rows 0 to 2D of qkv.weight)"),
                             ("qkv.weight", slice(2 * D, 3 * D), "the values (rows 2D to 3D of qkv.weight)"),
                             ("out.weight", slice(0, D), "out.weight")):
        if name not in values:
            raise Hint(f"your attention has no parameter called {name}")
        moved = values[name].clone()
        moved[rows] += torch.randn_like(moved[rows])
        attn.set_params({name: moved})
        out = attn(x)
        attn.set_params({name: values[name]})
        if not differs(out, base):
            raise Hint(f"the output of your attention does not change when {what} change")
    first, last = x.clone(), x.clone()
    first[:, 0] += torch.randn_like(first[:, 0])
    last[:, -1] += torch.randn_like(last[:, -1])
    if not (differs(attn(first)[:, 1:], base[:, 1:]) or differs(attn(last)[:, :-1], base[:, :-1])):
        raise Hint("no site of your attention hears another site: each output depends on its own site only")
    return base


def works(net: Any, values: dict, x: torch.Tensor, names: tuple, what: str) -> torch.Tensor:
    """Does `net` do the work? Its output is a tensor shaped like x, the same for the same x, that
    changes when x changes and when each parameter in `names` changes (set to other values, then
    back to `values`)."""
    base = net(x)
    if type(base) is not torch.Tensor or tuple(base.shape) != tuple(x.shape):
        raise Hint(f"{what} should give back a tensor of the shape of its input, {tuple(x.shape)}")
    if not close(net(x), base, atol=1e-6, rtol=0):
        raise Hint(f"{what} gives two different outputs for the same input (in eval() mode)")
    if not differs(net(x + torch.randn_like(x)), base):
        raise Hint(f"the output of {what} does not change when its input changes")
    for name in names:
        if name not in values:
            raise Hint(f"{what} has no parameter called {name}")
        net.set_params({name: values[name] + torch.randn_like(values[name])})
        moved = net(x)
        net.set_params({name: values[name]})
        if not differs(moved, base):
            raise Hint(f"the output of {what} does not change when {name} changes: does forward use "
                       f"self.{name.rsplit('.', 1)[0]}?")
    return base


def enliven(net: Any) -> dict:
    """Non-trivial values for a GPT's own weights and, one block at a time, for its blocks (however
    they are kept). A separate head gets the token table's numbers (so that tying is the tying
    test's business only). Returns the values of the GPT's own weights."""
    top = nontrivial({n: t for n, t in net.params(values=False).items() if not n.startswith("blocks.")})
    if "tokens.weight" in top and "head.weight" in top:
        top["head.weight"] = top["tokens.weight"].clone()
    net.set_params(top)
    for block in net.blocks:
        block.set_params(nontrivial(block.params(values=False)))
    return top


def gpt_works(net: Any, values: dict, ids: torch.Tensor, V: int) -> torch.Tensor:
    """Does the GPT do the work? Its logits are the same for the same tokens, and change when the
    tokens change and when the token table and the position table change (set to other values, then
    back to `values`)."""
    base = net(ids)
    if type(base) is not torch.Tensor or tuple(base.shape) != (*ids.shape, V):
        raise Hint(f"the logits of your GPT should be a tensor of shape {(*ids.shape, V)}")
    if not close(net(ids), base, atol=1e-6, rtol=0):
        raise Hint("your GPT gives two different logits for the same tokens (in eval() mode)")
    other = (ids + torch.randint(1, V, ids.shape)) % V
    if not differs(net(other), base):
        raise Hint("your GPT's logits do not change when the tokens change")
    table = "tokens.weight" if "tokens.weight" in values else "head.weight"
    for name in (table, "positions.weight"):
        if name not in values:
            raise Hint(f"your GPT has no parameter called {name}")
        net.set_params({name: values[name] + torch.randn_like(values[name])})
        moved = net(ids)
        net.set_params({name: values[name]})
        if not differs(moved, base):
            raise Hint(f"your GPT's logits do not change when {name} changes")
    return base


def dropout(net: Any, x: torch.Tensor, calm: torch.Tensor, what: str) -> None:
    """In train() mode `net` drops each number of its output with probability 0.5 and doubles the
    others (calm: its output for x in eval() mode): nn.Dropout(0.5) on its output."""
    net.train()
    first, second = net(x), net(x)
    assert type(first) is torch.Tensor and tuple(first.shape) == tuple(x.shape), \
        f"in train() mode the output of {what} should have the shape of x"
    assert not close(first, second), \
        f"in train() mode two calls of {what} on the same x give the same output: is there a dropout?"
    dropped = first.abs() < 1e-6
    kept = torch.isclose(first, 2 * calm, atol=1e-5, rtol=1e-4)
    assert bool((dropped | kept).all()), \
        f"in train() mode each number {what} gives should be 0 or twice the eval() value"
    assert 0.35 < dropped.float().mean().item() < 0.65, \
        f"{dropped.float().mean().item():.0%} of the outputs of {what} were dropped with dropout=0.5"


def gpt_weights(gpt: Any, kv_bias: bool = False) -> dict:
    """Non-trivial values for every weight of a GIVEN GPTWeights (the tied table once, as
    tokens.weight), set and returned; the queries' bias is zero, and the keys' and values' too
    unless `kv_bias`."""
    shapes = gpt.params(values=False)
    assert set(shapes) >= {"tokens.weight", "positions.weight", "norm.weight"} \
        and "head.weight" not in shapes and gpt.head.weight.identity() == gpt.tokens.weight.identity(), \
        "the GIVEN GPTWeights was changed: run its cell as given"
    values = nontrivial(shapes)
    for name, t in values.items():
        if name.endswith("attn.qkv.bias"):
            t[:len(t) // 3 if kv_bias else None] = 0
    gpt.set_params(values)
    return values


def page_layout(V: int, C: int, D: int, H: int, L: int) -> dict[str, tuple]:
    """The weights of the page's MyTransformer(V, D, H, L, max_length=C), by name: their shapes."""
    d, shapes = D // H, {"embed.weight": (V, D), "position.weight": (C, D), "norm.weight": (D,),
                         "norm.bias": (D,), "out.weight": (V, D), "out.bias": (V,)}
    for i in range(L):
        b = f"blocks.{i}."
        shapes.update({b + "norm1.weight": (D,), b + "norm1.bias": (D,), b + "norm2.weight": (D,),
                       b + "norm2.bias": (D,), b + "attention.mix.weight": (D, D),
                       b + "attention.mix.bias": (D,), b + "mlp.0.weight": (4 * D, D),
                       b + "mlp.0.bias": (4 * D,), b + "mlp.2.weight": (D, 4 * D), b + "mlp.2.bias": (D,)})
        shapes.update({f"{b}attention.heads.{j}.{m}.weight": (d, D) for j in range(H) for m in "QKV"})
    return shapes


def page_values(P: dict, H: int, L: int) -> dict[str, torch.Tensor]:
    """The chapter's weights P (no biases on the queries, keys and values) under the page's names:
    what a right copy puts into page.MyTransformer."""
    D = P["tokens.weight"].shape[1]
    d = D // H
    values = {"embed.weight": P["tokens.weight"], "position.weight": P["positions.weight"],
              "norm.weight": P["norm.weight"], "norm.bias": P["norm.bias"],
              "out.weight": P["tokens.weight"],
              "out.bias": torch.zeros(P["tokens.weight"].shape[0], dtype=P["tokens.weight"].dtype)}
    for i in range(L):
        b, W = f"blocks.{i}.", P[f"blocks.{i}.attn.qkv.weight"]
        for j in range(H):
            for s, m in enumerate("QKV"):
                values[f"{b}attention.heads.{j}.{m}.weight"] = W[s * D + j * d:s * D + (j + 1) * d]
        values.update({b + "attention.mix.weight": P[b + "attn.out.weight"],
                       b + "attention.mix.bias": P[b + "attn.out.bias"]})
        for mine, theirs in (("norm1", "norm1"), ("norm2", "norm2"), ("mlp.0", "mlp.up"),
                             ("mlp.2", "mlp.down")):
            values.update({f"{b}{mine}.{n}": P[f"{b}{theirs}.{n}"] for n in ("weight", "bias")})
    return values


def is_page_transformer(net: Any, V: int, C: int, D: int, H: int, L: int) -> None:
    """The copy is the page's MyTransformer(V, D, H, L, max_length=C, causal=True): its weights are
    the page's, by name and shape, and they do the work: set to a right copy of a GPT the check drew
    (not the one copied), it computes that GPT's logits. A class of another name or layout, or one
    that keeps the GPT it was given, is no copy."""
    shapes = {n: tuple(t.shape) for n, t in net.params(values=False).items()
              if t.is_floating_point() and n.endswith(("weight", "bias"))}
    want = page_layout(V, C, D, H, L)
    if shapes != want:
        odd = sorted(set(shapes) ^ set(want)) or sorted(n for n in want if shapes[n] != want[n])
        raise Hint("CopyToMyTransformer should return page.MyTransformer(vocab_size, dim, heads, "
                   "layers, max_length=context, causal=True); the weights of yours are not the page's "
                   f"({odd[0]}, ...)")
    P = nontrivial({n: torch.empty(s) for n, s in _chapter_layout(V, C, D, L).items()})
    for i in range(L):
        P[f"blocks.{i}.attn.qkv.bias"] = torch.zeros(3 * D)
    net.set_params(page_values(P, H, L))
    ids = torch.randint(0, V, (2, C))
    if not close(net(ids), logits(P, ids, H, L), atol=1e-4, rtol=1e-4):
        raise Hint("your copy does not compute what page.MyTransformer computes with its own weights: "
                   "return page.MyTransformer(..., causal=True) with the GPT's weights copied in")


def _chapter_layout(V: int, C: int, D: int, L: int) -> dict[str, tuple]:
    """The chapter GPT's weights (the tied table once, as tokens.weight), by name: their shapes."""
    shapes = {"tokens.weight": (V, D), "positions.weight": (C, D), "norm.weight": (D,), "norm.bias": (D,)}
    for i in range(L):
        b = f"blocks.{i}."
        shapes.update({b + "norm1.weight": (D,), b + "norm1.bias": (D,), b + "norm2.weight": (D,),
                       b + "norm2.bias": (D,), b + "attn.qkv.weight": (3 * D, D),
                       b + "attn.qkv.bias": (3 * D,),
                       b + "attn.out.weight": (D, D), b + "attn.out.bias": (D,),
                       b + "mlp.up.weight": (4 * D, D), b + "mlp.up.bias": (4 * D,),
                       b + "mlp.down.weight": (D, 4 * D), b + "mlp.down.bias": (D,)})
    return shapes


# ---------------------------------------------------- the chapter's own pieces, for the outer checks

class _Piece(torch.nn.Module):
    """A reference piece that lives on the checking side: made as a new GPT makes its pieces
    (weights of standard deviation 0.02, biases zero), and working on the device of its input."""

    def start(self) -> None:
        with torch.random.fork_rng(devices=[]):          # the check's own random numbers stay as they were
            torch.manual_seed(0)
            for module in self.modules():
                if isinstance(module, torch.nn.Linear):
                    torch.nn.init.normal_(module.weight, std=0.02)
                    torch.nn.init.zeros_(module.bias)

    def values(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {name: p.to(x.device) for name, p in self.named_parameters()}


class ReferenceSelfAttention(_Piece):
    """The chapter's SelfAttention(cfg), without dropout."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.qkv, self.out = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)
        self.heads = heads
        self.start()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        hears = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        return attention(self.values(x), x, self.heads, hears)


class ReferenceMLP(_Piece):
    """The chapter's MLP(cfg), without dropout."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.up, self.down = torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)
        self.start()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mlp(self.values(x), x)


class ReferenceBlock(_Piece):
    """The chapter's Block(cfg), pre-norm, without dropout."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.attn, self.mlp = ReferenceSelfAttention(dim, heads), ReferenceMLP(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        P, D = self.values(x), x.shape[-1]
        x = x + self.attn(F.layer_norm(x, (D,), P["norm1.weight"], P["norm1.bias"]))
        return x + self.mlp(F.layer_norm(x, (D,), P["norm2.weight"], P["norm2.bias"]))


REFERENCES = {"SelfAttention": lambda D, H: ReferenceSelfAttention(D, H),
              "MLP": lambda D, H: ReferenceMLP(D), "Block": lambda D, H: ReferenceBlock(D, H)}


@contextlib.contextmanager
def working_pieces(outer: Any, Config: Any, pieces: dict[str, Any], D: int, H: int,
                   C: int) -> Iterator[list]:
    """While inside, `outer` (the notebook's Block or GPT) is built with the chapter's own piece in
    place of each of `pieces` ({notebook name: the notebook's class}, inner pieces first) that does
    not work at these sizes: that raises, or gives no tensor of its input's shape. A mistake inside
    a piece costs that piece's points, not those of the pieces built from it. Yields the names of
    the pieces swapped."""
    swaps: dict[str, Any] = {}
    with torch.random.fork_rng(devices=[]):               # the check's own random numbers stay as they were
        cfg = Config(vocab_size=5, context=C, dim=D, heads=H, layers=1, dropout=0.0)
        x = torch.randn(2, min(C, 4), D)
        for name, piece in pieces.items():
            try:
                with outer.swapped(**swaps):
                    out = piece(cfg)(x)
                works_here = type(out) is torch.Tensor and tuple(out.shape) == tuple(x.shape)
            except Exception:                            # it raises, or is not there at all
                works_here = False
            if not works_here:
                swaps[name] = lambda *args, made=REFERENCES[name]: made(D, H)
    if not swaps:
        yield []
        return
    with outer.swapped(**swaps):
        yield sorted(swaps)
