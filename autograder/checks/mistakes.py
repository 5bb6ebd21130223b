"""The judge's side of named mistakes (:mod:`autograder.mistakes`): the student's piece and each
known mistake of its question, run on the same inputs, drawn here and never seen by the submission
before; a mistake is named when the student's answers match its answers on every input.

A function (``Attention``) is called on tensors; a module (``Head``, ``MultiHead``, ``Block``) is
built, given the same parameters on both sides (drawn here, by name: a module whose parameters are
named or shaped otherwise is simply not comparable) and called. An input that makes both raise
counts as agreeing, but at least one input must give answers, and a student's piece that matches
one of the question's known right answers (its ``expect: pass`` mutants) is never named: a correct
answer cannot look like a mistake.
"""
from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

SEED = 20_241_204                      # the inputs the judge asks with (none of a test's)
RAISED = "raised"
DIFFERENT = "parameters named or shaped otherwise"
Stop = tuple[type[BaseException], ...]


@dataclass
class Probe:
    """One way to ask a piece: built with ``make`` (None: a function, called as it is), then called
    with each of ``calls`` (arguments, keyword arguments)."""

    make: tuple[tuple, dict] | None
    calls: list[tuple[tuple, dict]] = field(default_factory=list)


def _draw(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g)


def _attention() -> list[Probe]:
    """One sentence and batches (L, d and the batch size apart; the batch size equal to d, and all
    three equal, so that a batch transposed the wrong way does not simply raise), large energies (a
    mask applied too late shows only when one weight takes almost everything) and the causal flag
    where the piece has one."""
    g = torch.Generator().manual_seed(SEED)
    probes = []
    for shape in ((5, 3), (2, 5, 3), (3, 4, 3), (3, 3, 3)):
        probes.append(Probe(None, [((_draw(g, *shape), _draw(g, *shape), _draw(g, *shape)), {})]))
    q, k, v = _draw(g, 2, 6, 4), _draw(g, 2, 6, 4), _draw(g, 2, 6, 4)
    for kwargs in ({}, {"causal": True}, {"causal": False}):
        probes.append(Probe(None, [((q, k, v), kwargs), ((30 * q, k, v), kwargs)]))
    return probes


def _module(*make: tuple[tuple, dict], dim: int) -> list[Probe]:
    """Each way of building the module, called on one sentence and on a batch of width ``dim``."""
    g = torch.Generator().manual_seed(SEED + dim)
    xs = [_draw(g, 5, dim), _draw(g, 2, 7, dim), _draw(g, 4, 4, dim)]    # 4: the heads' width
    return [Probe(m, [((x,), {}) for x in xs]) for m in make]


PROBES: dict[str, Callable[[], list[Probe]]] = {
    "Attention": _attention,
    "Head": lambda: _module(((6, 4), {}), ((6, 4), {"causal": True}), ((6, 4), {"causal": False}), dim=6),
    "MultiHead": lambda: _module(((8, 2), {}), ((8, 2), {"causal": True}), dim=8),
    "Block": lambda: _module(((8, 2), {}), ((8, 2), {"causal": True}), dim=8),
}


def _parts(answer: Any) -> list[Any]:
    """An answer as its parts: a tuple or list of tensors part by part, one tensor as one part."""
    parts = list(answer) if isinstance(answer, (tuple, list)) else [answer]
    return [p.detach().float() if isinstance(p, torch.Tensor) else type(p).__name__ for p in parts]


class Side:
    """How one side's module is set up (the judge's own: a real module)."""

    def shapes(self, module: Any) -> dict[str, tuple]:
        return {n: tuple(p.shape) for n, p in module.named_parameters()}

    def load(self, module: Any, values: dict[str, torch.Tensor]) -> None:
        own = dict(module.named_parameters())
        with torch.no_grad():
            for n, v in values.items():
                own[n].copy_(v)


class StudentSide(Side):
    """The student's module, through its handle (:class:`course.handles.Handle`)."""

    def shapes(self, module: Any) -> dict[str, tuple]:
        return {n: tuple(s.shape) for n, s in module.params(values=False).items()}

    def load(self, module: Any, values: dict[str, torch.Tensor]) -> None:
        module.set_params(values)


def _values(shapes: dict[str, tuple]) -> dict[str, torch.Tensor]:
    """The parameters both sides get: drawn by name, so that the same names get the same numbers."""
    g = torch.Generator().manual_seed(SEED)
    return {n: 0.5 * _draw(g, *shapes[n]) for n in sorted(shapes)}


def answers(piece: Any, probes: list[Probe], stop: Stop = (), side: Side | None = None,
            shapes: list[dict[str, tuple]] | None = None) -> list[Any]:
    """What ``piece`` answers to each call of each probe (:data:`RAISED` where building or calling
    raises; :data:`DIFFERENT` for every call of a probe whose module's parameters are not
    ``shapes``' (the student's, by probe), which then matches nothing). An error of ``stop``
    (the student's process gone, out of time) ends it. ``shapes``, when a list, gets each
    probe's parameter shapes appended."""
    side = side or Side()
    out: list[Any] = []
    for k, probe in enumerate(probes):
        try:
            made = piece if probe.make is None else piece(*probe.make[0], **probe.make[1])
            if probe.make is not None:
                found = side.shapes(made)
                if shapes is not None and len(shapes) == k:
                    shapes.append(found)
                if shapes is not None and found != shapes[k]:
                    out += [DIFFERENT] * len(probe.calls)
                    continue
                side.load(made, _values(found))
        except stop:
            raise
        except Exception:
            if shapes is not None and len(shapes) == k:
                shapes.append({})
            out += [RAISED] * len(probe.calls)
            continue
        for args, kwargs in probe.calls:
            try:
                out.append(_parts(made(*[a.clone() for a in args], **kwargs)))
            except stop:
                raise
            except Exception:
                out.append(RAISED)
    return out


def same(a: list[Any], b: list[Any]) -> bool:
    """Whether two pieces answered alike: the same calls raised, and every other answer has the
    same parts, tensors of one shape and equal within float32 rounding (NaN where the other has
    NaN); at least one call answered, and nothing built otherwise."""
    if len(a) != len(b) or all(x == RAISED for x in a) or DIFFERENT in a or DIFFERENT in b:
        return False
    for x, y in zip(a, b, strict=True):
        if (x == RAISED) != (y == RAISED):
            return False
        if x == RAISED:
            continue
        if len(x) != len(y):
            return False
        for p, r in zip(x, y, strict=True):
            if isinstance(p, str) or isinstance(r, str):
                if p != r:
                    return False
            elif p.shape != r.shape or not torch.allclose(p, r, atol=1e-4, rtol=1e-4, equal_nan=True):
                return False
    return True


def context(given: list[str], right: list[dict]) -> dict[str, Any]:
    """The names a known answer's code may call: torch's, then every function and class the
    notebook's GIVEN cells define, then the first right answer of each piece of the question (08
    rewrites the GIVEN pieces with a causal switch). Built here from the course's own code, never
    the student's."""
    names: dict[str, Any] = {"torch": torch, "math": math, "nn": torch.nn, "F": torch.nn.functional}
    for source in given:
        if not source.lstrip().startswith("# GIVEN"):
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                _define(ast.Module([node], []), names)
    done: set[str] = set()
    for r in right:
        if r["piece"] not in done:
            _define(r["code"], names)         # into the shared names: they call each other
            done.add(r["piece"])
    return names


def _define(code: Any, names: dict[str, Any]) -> None:
    try:
        exec(compile(code, "<known>", "exec"), names)
    except Exception:
        pass


def known(code: str, piece: str, names: dict[str, Any] | None = None) -> Any:
    """A known answer's piece, made from its code (the course's own: it runs here, in the judge), in
    a namespace of its own over ``names`` (:func:`context`)."""
    namespace = dict(names or context([], []))
    exec(compile(code, f"<mistake {piece}>", "exec"), namespace)
    return namespace[piece]


RIGHT, NAMED, UNKNOWN = "right", "named", "unknown"


def name(student_piece: Any, piece: str, mistakes: list[dict], right: list[dict],
         given: list[str] | tuple[str, ...] = (), stop: Stop = ()) -> tuple[str, list[str]]:
    """How the student's piece behaves: like one of the ``right`` answers of ``piece`` (:data:`RIGHT`),
    like these ``mistakes`` ({"id", "piece", "code"}, :data:`NAMED` and their ids) or like none of
    them (:data:`UNKNOWN`). ``right`` holds the question's right answers of every piece, ``given``
    the notebook's code cells."""
    probes = PROBES[piece]()
    names = context(list(given), right)
    shapes: list[dict[str, tuple]] = []
    theirs = answers(student_piece, probes, stop, StudentSide(), shapes)
    rights = [answers(known(r["code"], piece, names), probes, shapes=shapes)
              for r in right if r["piece"] == piece]
    keep = list(range(len(theirs)))
    if rights:        # only the calls a right answer takes (03's Attention has no causal flag)
        keep = [k for k in keep if any(r[k] not in (RAISED, DIFFERENT) for r in rights)]
    theirs = [theirs[k] for k in keep]
    if any(same(theirs, [r[k] for k in keep]) for r in rights):
        return RIGHT, []
    found = []
    for m in mistakes:
        said = answers(known(m["code"], piece, names), probes, shapes=shapes)
        if same(theirs, [said[k] for k in keep]):
            found.append(m["id"])
    return (NAMED if found else UNKNOWN), found


def name_all(lookup: Callable[[str], Any], question: dict, given: list[str] | tuple[str, ...] = (),
             stop: Stop = ()) -> list[str]:
    """The named mistakes of one question's test payload (``pieces``, ``mistakes``, ``right``):
    its pieces are run inner first, each while the ones before it behaved like a right answer
    (``lookup(piece)``: the student's piece, None when there is none)."""
    ids: list[str] = []
    for piece in question.get("pieces", []):
        student = lookup(piece)
        if student is None:
            break
        kind, found = name(student, piece, [m for m in question["mistakes"] if m["piece"] == piece],
                           list(question.get("right", [])), given, stop)
        ids += found
        if kind != RIGHT:
            break
    return ids
