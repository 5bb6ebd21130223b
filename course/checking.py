"""What a check needs beside the handles, in the student's kernel and in the grader alike: the forms a
plain answer may take, the truth of a check the student wrote, and a notebook left as it was found.

This module ships with every week, since the public checks (``grader.check``, nbgrader's visible
test cells) import it in the student's own Python, where the grader's package is not installed.
"""
from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import torch

from .handles import close, number


def numbers(value: Any, what: str) -> list[float]:
    """A list, a tuple or a tensor of plain numbers (a shape, row numbers) as a list of floats."""
    if type(value) is torch.Tensor:
        value = value.tolist()
    assert type(value) in (list, tuple), f"{what} is not a list or a shape"
    return [number(n) for n in value]


def is_truth(answer: Any) -> bool:
    """True or False, or a one-element bool tensor."""
    return type(answer) is bool or (type(answer) is torch.Tensor and answer.numel() == 1
                                    and answer.dtype == torch.bool)


def truth(answer: Any, name: str) -> bool:
    """What a check the student wrote said: True or False (a one-element bool tensor is fine too)."""
    if type(answer) is torch.Tensor and answer.numel() == 1 and answer.dtype == torch.bool:
        return bool(answer.item())
    assert type(answer) is bool, f"{name} should be True or False, not {type(answer).__name__}"
    return answer


def anchored(check: Callable[..., Any], own: tuple, fresh: tuple, what: str) -> bool:
    """What ``check`` (the check the student was asked to run, recomputed here on their own piece)
    says on the student's own inputs ``own``. Where it holds there, it must hold on ``fresh`` inputs
    of the same shapes too: a piece that is right only for the inputs the notebook shows it (a table
    of answers kept for them) is not a piece the check holds for, and a True said of it is no answer."""
    if not check(*own):
        return False
    try:
        again = bool(check(*fresh))
    except Exception:               # the piece fails on inputs it has not seen: the check does not hold
        again = False
    assert again, f"{what} holds for your own inputs only: on new ones of the same shapes it does not, so " \
        "your code answers for the inputs it was shown instead of computing"
    return True


def rows_add_to_one(weights: Any, rows: int, what: str = "the weights") -> None:
    """Attention weights whose `rows` rows (what the last index, j, runs over) each add up to one:
    ``weights.sum(dim=-1)`` is `rows` ones. The one check of it, for the public tests and the hidden
    ones alike; `what` names the weights in its message."""
    assert close(weights.sum(dim=-1), torch.ones(rows)), f"the rows of {what} do not add up to one"


def _modules(namespace: MutableMapping[str, Any]) -> list[tuple[torch.nn.Module, bool]]:
    """Every network the notebook's names hold, with its training flag (a check may call eval()).
    A half-built network (a blank answer's, its ``__init__`` never run) is passed over."""
    found: dict[int, tuple[torch.nn.Module, bool]] = {}
    for value in list(namespace.values()):
        if isinstance(value, torch.nn.Module):
            try:
                for module in value.modules():
                    found.setdefault(id(module), (module, bool(module.training)))
            except Exception:
                continue
    return list(found.values())


@contextlib.contextmanager
def left_as_found(namespace: MutableMapping[str, Any] | None = None) -> Iterator[None]:
    """Run a check so that the notebook afterwards is as the check found it: the random numbers it
    draws next (Python's, NumPy's and torch's, on every device), whether gradients are on, the
    default dtype, its networks' train/eval flags and, given the notebook's ``namespace``, every
    name in it (a check that binds or rebinds a name of the notebook has it put back).

    A check that moved the random state would change what the notebook prints after it: a student
    who runs the checks would see other numbers than one who does not."""
    import numpy as np

    states = random.getstate(), np.random.get_state()
    grad, dtype = torch.is_grad_enabled(), torch.get_default_dtype()
    names = dict(namespace) if namespace is not None else None
    flags = _modules(namespace) if namespace is not None else []
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    try:
        with torch.random.fork_rng(devices=devices):
            yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
        for module, training in flags:
            with contextlib.suppress(Exception):
                module.training = training
        if namespace is not None and names is not None:
            for name in [n for n in namespace if n not in names]:
                del namespace[name]
            for name, value in names.items():
                if namespace.get(name, _MISSING) is not value:
                    namespace[name] = value


_MISSING = object()
