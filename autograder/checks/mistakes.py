"""The judge's side of named mistakes (:mod:`autograder.mistakes`): the student's piece and each
known mistake of its question, run on the same inputs, drawn here and never seen by the submission
before; a mistake is named when the student's answers match its answers on every input.

An input that makes both raise counts as agreeing, but at least one input must give answers, and a
student's piece that matches one of the question's known right answers (its ``expect: pass``
mutants) is never named: a correct answer cannot look like a mistake.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

SEED = 20_241_204                      # the inputs the judge asks with (none of a test's)
RAISED = "raised"


def _attention_calls() -> list[tuple[tuple, dict]]:
    """One sentence and batches (L, d and the batch size apart, and once the batch size equal to d,
    so that a transposed batch does not simply raise), large energies (a mask applied too late shows
    only when one weight takes almost everything) and the causal flag where the piece has one."""
    g = torch.Generator().manual_seed(SEED)

    def draw(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g)

    calls: list[tuple[tuple, dict]] = []
    for shape in ((5, 3), (2, 5, 3), (3, 4, 3)):
        calls.append(((draw(*shape), draw(*shape), draw(*shape)), {}))
    q, k, v = draw(2, 6, 4), draw(2, 6, 4), draw(2, 6, 4)
    calls += [((30 * q, k, v), {}), ((q, k, v), {"causal": True}), ((30 * q, k, v), {"causal": True}),
              ((q, k, v), {"causal": False})]
    return calls


# per piece: the calls it is asked (arguments, keyword arguments)
PROBES: dict[str, Callable[[], list[tuple[tuple, dict]]]] = {"Attention": _attention_calls}


def _tensors(answer: Any) -> list[Any]:
    """An answer as its parts: a tuple or list of tensors part by part, one tensor as one part."""
    parts = list(answer) if isinstance(answer, (tuple, list)) else [answer]
    return [p.detach().float() if isinstance(p, torch.Tensor) else type(p).__name__ for p in parts]


Stop = tuple[type[BaseException], ...]


def answers(piece: Callable[..., Any], calls: list[tuple[tuple, dict]], stop: Stop = ()) -> list[Any]:
    """What ``piece`` answers to each call (:data:`RAISED` where it raises); an error of ``stop``
    (the student's process gone, out of time) ends it."""
    out: list[Any] = []
    for args, kwargs in calls:
        try:
            out.append(_tensors(piece(*[a.clone() for a in args], **kwargs)))
        except stop:
            raise
        except Exception:
            out.append(RAISED)
    return out


def same(a: list[Any], b: list[Any]) -> bool:
    """Whether two pieces answered alike: the same calls raised, and every other answer has the
    same parts, tensors of one shape and equal within float32 rounding (NaN where the other has
    NaN); at least one call answered."""
    if len(a) != len(b) or all(x == RAISED for x in a):
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


def known(code: str, piece: str) -> Callable[..., Any]:
    """A mutant's piece, made from its code (the course's own: it runs here, in the judge)."""
    namespace: dict[str, Any] = {"torch": torch, "math": math, "nn": torch.nn, "F": torch.nn.functional}
    exec(compile(code, f"<mistake {piece}>", "exec"), namespace)
    return namespace[piece]


def name(student_piece: Any, piece: str, mistakes: list[dict], right: list[str], stop: Stop = ()
         ) -> list[str]:
    """The ids of ``mistakes`` ({"id", "code"}, all of ``piece``) the student's piece behaves like
    (none when it behaves like one of the ``right`` answers' code)."""
    calls = PROBES[piece]()
    rights = [answers(known(code, piece), calls) for code in right]
    if rights:        # only the calls a right answer takes (03's Attention has no causal flag)
        keep = [k for k in range(len(calls)) if any(r[k] != RAISED for r in rights)]
        calls = [calls[k] for k in keep]
        rights = [[r[k] for k in keep] for r in rights]
    theirs = answers(student_piece, calls, stop)
    if any(same(theirs, r) for r in rights):
        return []
    return [m["id"] for m in mistakes if same(theirs, answers(known(m["code"], piece), calls))]
