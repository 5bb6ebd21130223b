"""08's causal switch, handed on: Attention(q, k, v, causal) masks the future, and each outer piece
(Head, MultiHead, Block, MyTransformer) must hand its `causal` on to the piece inside it.

An outer piece is checked with the reference Attention in place of the notebook's (so a wrong
Attention costs Attention's points), and, when its own inner piece is what goes wrong, only on what
it does itself: that it hands `causal` on (a stand-in for the inner piece records what it gets) and
does its own work around it (with a plain linear map in place of the inner piece). Whether a piece
is causal is asked of the shared check (:mod:`autograder.checks.causality`), as 09 asks it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from course.handles import StudentError, close, given

from .. import causality, params
from ..hints import Hint
from ..reference import causal_attention


def perturb(piece: Any) -> None:
    """New values of a healthy size for every parameter of `piece`."""
    piece.set_params(params.scaled(piece.params(values=False), matrix=1.0, weight=(1, 0.5)))


def attention_computes(Attention: Any) -> bool:
    """The notebook's Attention computes (without the switch): the same q, k, v give the same
    answer, its weights change when q changes and when k changes, its output when v changes."""
    try:
        q, k, v = torch.randn(3, 2, 5, 4)
        out, w = Attention(q, k, v)
        if type(out) is not torch.Tensor or type(w) is not torch.Tensor or tuple(out.shape) != (2, 5, 4) \
                or tuple(w.shape) != (2, 5, 5):
            return False
        again = Attention(q, k, v)
        if not (close(again[0], out, atol=1e-6) and close(again[1], w, atol=1e-6)):
            return False
        for other in ((torch.randn(2, 5, 4), k, v), (q, torch.randn(2, 5, 4), v)):
            w2 = Attention(*other)[1]
            if type(w2) is not torch.Tensor or close(w2, w, atol=1e-4):
                return False
        out2 = Attention(q, k, torch.randn(2, 5, 4))[0]
        return type(out2) is torch.Tensor and not close(out2, out, atol=1e-4)
    except Exception:
        return False


def switch_used(Attention: Any, Head: Any) -> bool:
    """The causal switch does work somewhere: the notebook's Attention's causal weights differ from
    the plain ones and still change with q and k; or (when Attention is where it goes wrong) its
    Head with causal=True, run with the reference Attention, gives other outputs than without."""
    try:
        q, k, v = torch.randn(3, 2, 5, 4)
        w = Attention(q, k, v, causal=True)[1]
        plain = Attention(q, k, v)[1]
        others = [Attention(torch.randn(2, 5, 4), k, v, causal=True)[1],
                  Attention(q, torch.randn(2, 5, 4), v, causal=True)[1]]
        if type(w) is torch.Tensor and tuple(w.shape) == (2, 5, 5) and not close(w, plain, atol=1e-4) \
                and all(type(o) is torch.Tensor and tuple(o.shape) == (2, 5, 5) and not close(o, w, atol=1e-4)
                        for o in others):
            return True
    except Exception:
        pass
    try:
        on, off = Head(8, 4, causal=True), Head(8, 4)
        values = {name: torch.randn(t.shape) for name, t in on.params(values=False).items()}
        on.set_params(values)
        off.set_params(values)
        x = torch.randn(2, 5, 8)
        with on.swapped(Attention=causal_attention):
            a, b = on(x), off(x)
        return type(a) is torch.Tensor and type(b) is torch.Tensor and tuple(a.shape) == (2, 5, 4) \
            and not close(a, b, atol=1e-5)
    except Exception:
        return False


def switch_gates(Attention: Any, Head: Any, then: str, attention: bool = True) -> None:
    """The gates of the causal checks: the notebook's Attention computes (unless `attention` is
    False), and the switch does work somewhere; a Hint ending in `then` when not."""
    if attention and not attention_computes(Attention):
        raise Hint("your Attention does not compute yet (its weights should change with q and k, its output "
                   f"with v), {then}")
    if not switch_used(Attention, Head):
        raise Hint(f"causal=True changes nothing yet (not in your Attention, nor in your Head), {then}")


def hears_right(make: Callable, causal: bool, dim: int, L: int = 7) -> bool:
    """With the reference Attention: is the piece that make() builds causal when it should be
    (later sites never change earlier outputs), and not when it should not (changing the last site
    changes every output)?"""
    try:
        piece = make()
        perturb(piece)
        x = torch.randn(2, L, dim)
        with piece.swapped(Attention=causal_attention):
            out = piece(x)
            if type(out) is not torch.Tensor or tuple(out.shape[:2]) != (2, L) or torch.isnan(out).any():
                return False
            if causal:
                return causality.earlier_unchanged(piece, x, out, (1, L // 2, L - 1),
                                                   lambda x, s: torch.randn(2, L - s, dim), atol=1e-5)
            y = x.clone()
            y[:, -1] = torch.randn(2, dim)
            later = piece(y)
            return type(later) is torch.Tensor and tuple(later.shape) == tuple(out.shape) \
                and bool(((later - out).abs().amax(-1) > 1e-6).all())
    except Exception:
        return False


def net_hears_right(make: Callable, causal: bool, V: int, L: int = 8) -> bool:
    """The same for a whole network, on tokens: with causal=True the logits at position i do not
    change when the tokens after i change; without, changing the last token changes them all."""
    try:
        net = make()
        perturb(net)
        x = torch.randint(V, (2, L))
        with net.swapped(Attention=causal_attention):
            out = net(x)
            if type(out) is not torch.Tensor or tuple(out.shape) != (2, L, V) or torch.isnan(out).any():
                return False
            if causal:                  # the tokens after i = 0, L // 2, L - 2 changed
                return causality.earlier_unchanged(
                    net, x, out, (1, L // 2 + 1, L - 1),
                    lambda x, s: (x[:, s:] + torch.randint(1, V, (2, L - s))) % V, atol=1e-4)
            y = x.clone()
            y[:, -1] = (x[:, -1] + 1) % V
            later = net(y)
            return type(later) is torch.Tensor and tuple(later.shape) == tuple(out.shape) \
                and bool(((later - out).abs().amax(-1) > 1e-6).all())
    except Exception:
        return False


def _uses(piece: Any, shapes: dict, x: Any, out: Any, groups: tuple) -> bool:
    """Each group of the piece's own parameters (by prefix), given new values in turn, changes its
    output for x (`out`, what it gave before)."""
    for prefix in groups:
        names = [name for name in shapes if name.startswith(prefix)]
        if not names:
            return False
        piece.set_params({name: torch.randn(shapes[name].shape) for name in names})
        changed = piece(x)
        if type(changed) is not torch.Tensor or close(changed, out, atol=1e-6):
            return False
        out = changed
    return True


def works(make: Callable, dim: int, groups: tuple, L: int = 6) -> bool:
    """With the reference Attention, the piece make() builds computes: the same input gives the
    same output, the output at the last site changes when the input at site 0 changes (the sites
    talk), and each group of its own parameters is used."""
    try:
        piece = make()
        perturb(piece)
        shapes = piece.params(values=False)
        x = torch.randn(2, L, dim)
        with piece.swapped(Attention=causal_attention):
            out = piece(x)
            if type(out) is not torch.Tensor or tuple(out.shape) != (2, L, dim) \
                    or not torch.isfinite(out).all():
                return False
            if not close(piece(x), out, atol=1e-6):
                return False
            y = x.clone()
            y[:, 0] = torch.randn(2, dim)
            later = piece(y)
            if type(later) is not torch.Tensor or tuple(later.shape) != (2, L, dim) \
                    or close(later[:, -1], out[:, -1], atol=1e-6):
                return False
            return _uses(piece, shapes, x, out, groups)
    except Exception:
        return False


def net_works(make: Callable, V: int, L: int = 6) -> bool:
    """The same for a whole network, on tokens: the same tokens give the same logits, the logits at
    the last position change when the token at position 0 changes, and the token table, the blocks
    and the output layer are used."""
    try:
        net = make()
        perturb(net)
        shapes = net.params(values=False)
        x = torch.randint(V, (2, L))
        with net.swapped(Attention=causal_attention):
            out = net(x)
            if type(out) is not torch.Tensor or tuple(out.shape) != (2, L, V) \
                    or not torch.isfinite(out).all():
                return False
            if not close(net(x), out, atol=1e-6):
                return False
            y = x.clone()
            y[:, 0] = (x[:, 0] + torch.randint(1, V, (2,))) % V
            later = net(y)
            if type(later) is not torch.Tensor or tuple(later.shape) != (2, L, V) \
                    or close(later[:, -1], out[:, -1], atol=1e-6):
                return False
            return _uses(net, shapes, x, out, ("embed.", "blocks.", "out."))
    except Exception:
        return False


def own_work(outer: Any, inner: str, make: Callable, x: Any, y: Any, groups: tuple, sizes: tuple) -> bool:
    """The outer piece does its own work whatever the piece inside it does: built with a plain
    linear map (made on the student's side) in place of each `inner` it makes, the same input gives
    the same output, another input another output, and each group of its own parameters is used."""
    try:
        linear = given("nets.nn").Linear
        spare = [linear(*sizes) for _ in range(6)]

        def stand_in(*args: Any, **kwargs: Any) -> Any:
            return spare.pop()._ref                # the student's code gets the linear map itself
        with outer.swapped(**{inner: stand_in}):
            piece = make()
        perturb(piece)
        shapes = piece.params(values=False)
        out = piece(x)
        if type(out) is not torch.Tensor or tuple(out.shape[:2]) != tuple(x.shape[:2]) \
                or not torch.isfinite(out).all():
            return False
        if not close(piece(x), out, atol=1e-6):
            return False
        other = piece(y)
        if type(other) is not torch.Tensor or close(other, out, atol=1e-6):
            return False
        return _uses(piece, shapes, x, out, groups)
    except Exception:
        return False


def handed_on(outer: Any, inner: str, make: Callable) -> list:
    """The causal values that building the outer piece (make()) hands to the notebook's `inner` (a
    stand-in records them; building stops there, since the stand-in is not a real piece)."""
    seen = []

    def stand_in(*args: Any, **kwargs: Any) -> None:
        seen.append(kwargs["causal"] if "causal" in kwargs else (args[2] if len(args) > 2 else False))
    with outer.swapped(**{inner: stand_in}):
        try:
            make()
        except StudentError:
            pass
    return seen


@dataclass(frozen=True)
class Level:
    """An outer piece of the page and the piece inside it to which it hands `causal` on."""

    outer: str                                # "MultiHead"
    inner: str                                # "Head"
    groups: tuple                             # prefixes of the outer piece's own parameters
    make: Callable[[Any, tuple, bool], Any]   # (class, sizes, causal) -> a piece (causal False: no switch)
    make_inner: Callable[[Any, tuple, bool], Any]
    hears: Callable[[Callable, bool, tuple], bool]
    inner_hears: Callable[[Callable, bool, tuple], bool]
    works: Callable[[Callable, tuple], bool]
    inputs: Callable[[tuple], tuple]          # two inputs of the outer piece
    linear: Callable[[tuple], tuple]          # the sizes of a linear map in place of the inner piece
    name: Callable[[tuple], str]              # how the messages name the outer piece
    says: dict                                # what the messages say


def _switch(cls: Any, causal: bool, *args: Any, **kwargs: Any) -> Any:
    return cls(*args, **kwargs, causal=True) if causal else cls(*args, **kwargs)


MULTIHEAD = Level(
    outer="MultiHead", inner="Head", groups=("heads.", "mix."),
    make=lambda cls, s, causal: _switch(cls, causal, *s),
    make_inner=lambda cls, s, causal: _switch(cls, causal, s[0], s[0] // s[1]),
    hears=lambda make, causal, s: hears_right(make, causal, s[0]),
    inner_hears=lambda make, causal, s: hears_right(make, causal, s[0]),
    works=lambda make, s: works(make, s[0], ("heads.", "mix.")),
    inputs=lambda s: (torch.randn(2, 6, s[0]), torch.randn(2, 6, s[0])),
    linear=lambda s: (s[0], s[0] // s[1]), name=lambda s: f"MultiHead({s[0]}, {s[1]}",
    says={"works": "its output should change with its input and use its heads and self.mix",
          "leaks": "changing later sites changed the output at earlier sites; hand causal on to every Head",
          "deaf": "changing the last site should change the output at every site",
          "on": "MultiHead(dim, heads, causal=True) should make its heads with Head(dim, head_dim, causal)",
          "off": "MultiHead(dim, heads) should make its heads without the causal switch (causal=False)",
          "own": "its output should be self.mix of its heads' outputs side by side"})
BLOCK = Level(
    outer="Block", inner="MultiHead", groups=("attention.", "mlp."),
    make=lambda cls, s, causal: _switch(cls, causal, *s),
    make_inner=lambda cls, s, causal: _switch(cls, causal, *s),
    hears=lambda make, causal, s: hears_right(make, causal, s[0]),
    inner_hears=lambda make, causal, s: hears_right(make, causal, s[0]),
    works=lambda make, s: works(make, s[0], ("attention.", "mlp.")),
    inputs=lambda s: (torch.randn(2, 6, s[0]), torch.randn(2, 6, s[0])),
    linear=lambda s: (s[0], s[0]), name=lambda s: f"Block({s[0]}, {s[1]}",
    says={"works": "its output should change with its input and use self.attention and self.mlp",
          "leaks": "changing later sites changed the output at earlier sites; hand causal on to MultiHead",
          "deaf": "changing the last site should change the output at every site",
          "on": "Block(dim, heads, causal=True) should make its attention with "
                "MultiHead(dim, heads, causal)",
          "off": "Block(dim, heads) should make its MultiHead without the causal switch (causal=False)",
          "own": "x + attention(norm1(x)), then x + mlp(norm2(x))"})
MY_TRANSFORMER = Level(
    outer="MyTransformer", inner="Block", groups=("embed.", "blocks.", "out."),
    make=lambda cls, s, causal: _switch(cls, causal, s[0], dim=s[1], heads=s[2], layers=s[3]),
    make_inner=lambda cls, s, causal: _switch(cls, causal, s[1], s[2]),
    hears=lambda make, causal, s: net_hears_right(make, causal, s[0]),
    inner_hears=lambda make, causal, s: hears_right(make, causal, s[1]),
    works=lambda make, s: net_works(make, s[0]),
    inputs=lambda s: (torch.randint(s[0], (2, 6)), torch.randint(s[0], (2, 6))),
    linear=lambda s: (s[1], s[1]),
    name=lambda s: f"MyTransformer({s[0]}, dim={s[1]}, heads={s[2]}, layers={s[3]}",
    says={"works": "its logits should change with the tokens and use self.embed, self.blocks and self.out",
          "leaks": "changing later tokens changed the logits at earlier positions (or gave NaN); "
                   "hand causal on to every Block",
          "deaf": "changing the last token should change the logits at every position",
          "on": "MyTransformer(..., causal=True) should make every block with Block(dim, heads, causal)",
          "off": "MyTransformer(...) without causal should make its blocks without the switch "
                 "(causal=False)",
          "own": "out(norm(blocks(embed(x) + position(positions))))"})


def hands_on(level: Level, outer: Any, inner: Any, sizes: list[tuple]) -> None:
    """For each of `sizes`: with the reference Attention the outer piece is causal with the switch
    and not without it, and computes; or else (when the notebook's inner piece is not right either)
    it hands `causal` on to its inner piece and does its own work around it."""
    worked = False
    for s in sizes:
        name = level.name(s)
        on = level.hears(lambda s=s: level.make(outer, s, True), True, s)
        off = level.hears(lambda s=s: level.make(outer, s, False), False, s)
        if on and off:
            worked = worked or level.works(lambda s=s: level.make(outer, s, True), s)
            if not worked:
                raise Hint(f"{name}, causal=True) does not compute yet: with a correct Attention, "
                           f"{level.says['works']}")
            continue
        # not the outer piece's fault if its inner piece does not hear right and it hands causal on
        inner_right = level.inner_hears(lambda s=s: level.make_inner(inner, s, True), True, s) \
            and level.inner_hears(lambda s=s: level.make_inner(inner, s, False), False, s)
        if inner_right:
            raise Hint(f"{name}, causal=True) should be causal and {name}) should not: "
                       + level.says["leaks" if not on else "deaf"])
        given_on = handed_on(outer, level.inner, lambda s=s: level.make(outer, s, True))
        given_off = handed_on(outer, level.inner, lambda s=s: level.make(outer, s, False))
        if not (given_on and all(c == True for c in given_on)):    # noqa: E712 (a tensor True counts)
            raise Hint(level.says["on"])
        if not (given_off and all(c == False for c in given_off)):    # noqa: E712
            raise Hint(level.says["off"])
        x, y = level.inputs(s)
        if not own_work(outer, level.inner, lambda s=s: level.make(outer, s, True), x, y, level.groups,
                        level.linear(s)):
            raise Hint(f"{name}) does not do its own work: {level.says['own']}")


def own_network_computes(MyTransformer: Any, causal: bool) -> bool:
    """The notebook's own MyTransformer (its own Attention inside) computes: the same sentence gives
    the same logits, another sentence other logits, and its token table and output layer are used."""
    from course import Encode, vocab
    try:
        net = MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=causal)
        shapes = net.params(values=False)
        x, y = Encode("the cat is alive")[None], Encode("the box is alive")[None]
        a = net(x)
        if type(a) is not torch.Tensor or tuple(a.shape) != (1, 4, len(vocab)) or not torch.isfinite(a).all():
            return False
        if not close(net(x), a, atol=1e-6) or close(net(y), a, atol=1e-6):
            return False
        for name in ("embed.weight", "out.weight"):
            if name not in shapes:
                return False
            net.set_params({name: torch.randn(shapes[name].shape)})
            b = net(x)
            if type(b) is not torch.Tensor or close(b, a, atol=1e-6):
                return False
            a = b
        return True
    except Exception:
        return False


def unchanged_positions(MyTransformer: Any, causal: bool) -> list[int] | None:
    """The positions where the notebook's own MyTransformer's logits are identical for "the cat is
    alive" and "the cat is empty" (None when its MyTransformer does not compute yet)."""
    from course import Encode, vocab
    if not own_network_computes(MyTransformer, False):
        return None
    try:
        torch.manual_seed(0)
        net = MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=causal)
        a = net(Encode("the cat is alive")[None])[0]
        b = net(Encode("the cat is empty")[None])[0]
        return [i for i in range(4) if torch.allclose(a[i], b[i])]
    except Exception:
        return None
