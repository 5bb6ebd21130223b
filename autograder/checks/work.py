"""Does the answer do the work? The gates a property test passes first.

A property (batch = alone, permutation, gradients, device, the rules) holds for many answers that
do nothing: a constant, zeros, an echo of the input. So before a property counts, its test asks
here that the answer computes: the same input gives the same output, another input another output,
and each part the page names (a table, a matrix, a piece) changes the output when it changes. A
gate that fails raises a :class:`~autograder.checks.hints.Hint` naming what does not change, so
the student reads what is wrong, not the property it kept from being checked.
"""
from __future__ import annotations

import math
from typing import Any

import torch

from course.handles import StudentError, close

from . import params, reference
from .hints import Hint, crash


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


TABLES = ("embed.weight", "position.weight", "out.weight")


def position_net(WithPosition: Any, V: int, M: int, L: int) -> tuple:
    """A WithPosition(V, 32, M) that uses the tokens and each of its tables: (the network, its
    parameters' shapes, L cut to its position table's rows)."""
    net = WithPosition(V, 32, M)
    shapes = net.params(values=False)
    L = params.rows(shapes, "position.weight", L)
    logits_use(net, V, max(1, min(5, L)), TABLES)
    return net, shapes, L


def _pair(answer: Any, piece: str) -> tuple:
    """(out, weights) from what `piece` returned."""
    if type(answer) not in (tuple, list) or len(answer) != 2:
        raise Hint(f"{piece} does not return (out, weights)")
    if not all(type(t) is torch.Tensor for t in answer):
        raise Hint(f"{piece} does not return two tensors")
    return tuple(answer)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, atol=1e-4)


def attention_works(Attention: Any) -> None:
    """Attention's weights come from the queries and the keys and its output from the values (each
    changes with them), and the sites listen to each other: the query or key, and the value, of one
    site reach the output of the others, and the weights are not (nearly) the identity."""
    torch.manual_seed(11)
    q, k, v = torch.randn(3, 6, 4)
    answers = [Attention(q, k, v), Attention(q, k, v), Attention(q + torch.randn(6, 4), k, v),
               Attention(q, k + torch.randn(6, 4), v), Attention(q, k, v + torch.randn(6, 4))]
    (out, weights), (out2, weights2), (_, new_q), (_, new_k), (new_v, _) = (
        _pair(a, "Attention") for a in answers)
    if not (_same(out2, out) and _same(weights2, weights)):
        raise Hint("your Attention gives different answers for the same q, k, v")
    if _same(new_q, weights):
        raise Hint("the weights of your Attention do not change when the queries change")
    if _same(new_k, weights):
        raise Hint("the weights of your Attention do not change when the keys change")
    if _same(new_v, out):
        raise Hint("the output of your Attention does not change when the values change")
    j = 2
    others = [i for i in range(6) if i != j]
    q_j, k_j, v_j = q.clone(), k.clone(), v.clone()
    q_j[j] += 2 * torch.randn(4)
    k_j[j] += 2 * torch.randn(4)
    v_j[j] += 2 * torch.randn(4)
    mixed = [Attention(q_j, k, v), Attention(q, k_j, v), Attention(q, k, v_j)]
    (out_q, _), (out_k, _), (out_v, _) = (_pair(a, "Attention") for a in mixed)
    if not out.shape == out_q.shape == out_k.shape == out_v.shape == (6, 4):
        raise Hint("your Attention does not return an output of the shape of v")
    if _same(out_q[others], out[others]) and _same(out_k[others], out[others]) \
            or _same(out_v[others], out[others]):
        raise Hint("in your Attention, changing the query, key or value of one site changes the output "
                   "of no other site: do your sites listen to each other?")
    if weights.shape != (6, 6):
        raise Hint("the weights of your Attention are not of shape (L, L)")
    if not weights.sum() - torch.diagonal(weights).sum() > 0.5:      # (NaN weights too)
        raise Hint("the weights of your Attention put (almost) nothing on the other sites: every site "
                   "listens only to itself")


def _differ(a: Any, b: Any) -> bool:
    return not close(a, b, atol=1e-3, rtol=1e-3)


def head_works(Head: Any, dim: int, head_dim: int, L: int) -> None:
    """A Head computes from x, with the reference Attention in place of the notebook's: its output
    is the same for the same x and changes with x, head.weights change with x, with Q and with K, and
    the output changes with V (a constant, an echo of x, uniform weights or fresh random numbers
    do not)."""
    head = Head(dim, head_dim)

    def new() -> torch.Tensor:
        return 1.5 * torch.randn(head_dim, dim) / math.sqrt(dim)
    head.set_params({"Q.weight": new(), "K.weight": new(), "V.weight": new()})
    x, y = torch.randn(L, dim), torch.randn(L, dim)
    with head.swapped(Attention=reference.attention):
        out, weights = head(x), head.weights.get()
        again, again_weights = head(x), head.weights.get()
        other, other_weights = head(y), head.weights.get()
        head.set_params({"Q.weight": new()})
        _, q_weights = head(x), head.weights.get()
        head.set_params({"K.weight": new()})
        qk, qk_weights = head(x), head.weights.get()
        head.set_params({"V.weight": new()})
        v = head(x)
    if not (close(again, out, atol=1e-6, rtol=1e-5) and close(again_weights, weights, atol=1e-6, rtol=1e-5)):
        raise Hint("your Head gives another output or other weights each time it is called on the same x")
    for changed, before, what in ((other, out, "your Head's output does not change when x changes"),
                                  (other_weights, weights, "head.weights does not change when x changes"),
                                  (q_weights, weights, "head.weights does not change when Q changes"),
                                  (qk_weights, q_weights, "head.weights does not change when K changes"),
                                  (v, qk, "your Head's output does not change when V changes")):
        if not _differ(changed, before):
            raise Hint(what)


def responds(piece: Any, dim: int, L: int, parts: list[tuple[str, Any]], what: str) -> None:
    """A piece that maps sentences of shape (2, L, dim) to sentences computes, with the reference
    Attention in place of the notebook's: after new values for all its parameters, its output is
    the same for the same x and changes with x, and then with each of `parts` in turn ((the part's
    name, a function that gives the part new values))."""
    piece.set_params(params.scaled(piece.params(values=False)))
    x, y = torch.randn(2, L, dim), torch.randn(2, L, dim)
    with piece.swapped(Attention=reference.attention):
        out, again, other = piece(x), piece(x), piece(y)
        changed = []
        for _, renew in parts:
            renew()
            changed.append(piece(x))
    if not close(again, out, atol=1e-6, rtol=1e-5):
        raise Hint(f"your {what} gives another output each time it is called on the same x")
    if not _differ(other, out):
        raise Hint(f"your {what}'s output does not change when x changes")
    for (name, _), before, after in zip(parts, [out, *changed], changed, strict=False):
        if not _differ(after, before):
            raise Hint(f"your {what}'s output does not change when {name} changes")


def multihead_works(MultiHead: Any, dim: int, heads: int, L: int) -> None:
    """A MultiHead computes from x with its heads (a constant, an echo of x, mix(x) alone, heads
    that ignore their Q, K, V or fresh random numbers do not): its output changes with x, then
    with the Q of every head, the K, the V."""
    multi = MultiHead(dim, heads)

    def renew(matrix: str) -> None:
        for head in multi.heads:
            head.set_params(params.scaled(head.params(values=False), vectors_too=True,
                                          keep=lambda name: name.split(".")[0] == matrix))
    parts = [(f"the {m} of its heads", lambda m=m: renew(m)) for m in "QKV"]
    responds(multi, dim, L, parts, "MultiHead")


def block_works(Block: Any, dim: int, heads: int, L: int) -> None:
    """A Block computes from x with its attention and its mlp (a constant, x itself, x plus a
    constant, only one of the two steps or fresh random numbers do not)."""
    block = Block(dim, heads)

    def renew(piece: Any) -> None:
        piece.set_params(params.scaled(piece.params(values=False)))
    responds(block, dim, L, [("its attention", lambda: renew(block.attention)),
                             ("its mlp", lambda: renew(block.mlp))], "Block")


def transformer_works(make: Any, V: int, L: int = 6, then: str = "") -> None:
    """A network that make() builds computes its logits from tokens of a vocabulary of V with its
    own pieces: the same tokens give the same logits, other tokens other logits, and its token
    table and its output layer are used. Fails with what is missing, and `then`."""
    try:
        net = make()
        shapes = net.params(values=False)
        if "embed.weight" not in shapes or "out.weight" not in shapes:
            raise Hint(f"your MyTransformer has no self.embed or no self.out{then}")
        net.set_params(params.scaled(shapes, matrix=1.0))
        x = torch.randint(V, (2, L))
        out = net(x)
        if type(out) is not torch.Tensor or tuple(out.shape) != (2, L, V) or not torch.isfinite(out).all():
            raise Hint(f"your MyTransformer does not give finite logits of shape (batch, L, vocab){then}")
        if not close(net(x), out, atol=1e-6):
            raise Hint(f"your MyTransformer gives other logits each time for the same tokens{then}")
        y = x.clone()
        y[:, 0] = (x[:, 0] + torch.randint(1, V, (2,))) % V
        if close(net(y), out, atol=1e-6):
            raise Hint(f"your MyTransformer's logits do not change when the tokens change{then}")
        for name in ("embed.weight", "out.weight"):
            net.set_params({name: torch.randn(shapes[name].shape)})
            changed = net(x)
            if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
                raise Hint(f"your MyTransformer's logits do not change when {name} changes{then}")
            out = changed
    except StudentError as error:
        raise Hint(crash(error, "MyTransformer") + then) from None
    except Hint:
        raise
    except Exception:
        raise Hint(f"your MyTransformer does not compute its logits from the tokens yet{then}") from None
