"""What one exercise may not use: the course's own answer to it (``course.tinydenoiser``'s
``DenoiserBlock`` for a Block, ``course.training.TrainLoop`` for a training loop, the earlier answer in
``page``), or what its text says to do without ("by hand": PyTorch's layer norm, code that counts).

Read from the notebook's code on the grader's side, like the page's rules: the definitions the
exercise grades, and everything they use (:func:`course.rules.follow.followed`, in the course's cells
too: a GIVEN helper that hands a forbidden piece on is a way to it). A piece counts however it is
reached: imported, through its module, under another name, subclassed, wrapped, called from a method
or copied onto a class of the notebook's own (``forward = DenoiserBlock.forward``); a class counts with
its subclasses, a module with everything defined in it.
"""
from __future__ import annotations

import ast
import functools
import importlib
import types
from collections.abc import Iterable
from dataclasses import dataclass

from .findings import Kind
from .follow import followed
from .reading import read
from .resolve import origin, within
from .syntax import plain_string


@dataclass(frozen=True)
class Exercise:
    """What the definitions ``names`` may not reach. ``pieces`` and ``calls``: dotted names of the
    course's or the libraries' objects (a module stands for everything in it, a class for its
    subclasses too); ``given``: names of the notebook (``page.Block``, ``Head``); ``methods``:
    attribute names on any object (``numel``)."""

    names: tuple[str, ...]
    pieces: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    given: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()


@dataclass(frozen=True)
class Use:
    """One use of what an exercise may not use: ``shown`` as the notebook wrote it, ``entry`` the
    list's entry it is, ``line`` the line of the notebook's code it is on (so that a student finds
    it: the use may be in a cell of theirs other than the question's, which the question's code
    calls)."""

    shown: str
    entry: str
    line: str = ""


@functools.lru_cache(maxsize=512)
def _resolved(name: str) -> object | None:
    """The object a dotted name of the course's or a library's names, found here (in the grader);
    None when its module is not installed (a week's engine that does not ship it)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return None
        return obj
    return None


def _is(reached: str, obj: object, entry: str) -> bool:
    """Whether what was reached (its dotted name, and the object when it resolved) is ``entry``, in it
    (a module's member, a class's attribute) or, for a class, one of its subclasses."""
    if reached == entry or reached.startswith(entry + "."):
        return True
    target = _resolved(entry)
    if obj is None or target is None:
        return False
    if obj is target:
        return True
    if isinstance(target, types.ModuleType):
        home = getattr(obj, "__name__", "") if isinstance(obj, types.ModuleType) else origin(obj)
        return isinstance(home, str) and within(home, (target.__name__,))
    if isinstance(target, type) and isinstance(obj, type):
        try:
            return issubclass(obj, target)
        except TypeError:
            return False
    return False


def _chain(node: ast.AST) -> str | None:
    """``page.Block`` for an attribute chain on a name of the notebook (``getattr(page, "Block")``
    too); None for anything else."""
    attrs = []
    while True:
        if isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) >= 2 and plain_string(node.args[1]):
            attrs.append(node.args[1].value)
            node = node.args[0]
        else:
            break
    return ".".join([node.id, *reversed(attrs)]) if isinstance(node, ast.Name) and attrs else None


def _shown(node: ast.AST, fallback: str) -> str:
    if isinstance(node, ast.expr):
        try:
            return ast.unparse(node)[:80]
        except Exception:
            pass
    return fallback


def _at(what: str, line: str) -> str:
    """What was found, with the line of the notebook's code it is on."""
    return f"{what} (in the line `{line[:100]}`)" if line else what


def uses(cells: Iterable[str], exercise: Exercise, template: Iterable[str] | None = None) -> list[Use]:
    """Every use of what ``exercise`` may not use, in the notebook's definitions of its names and in
    everything they use, in the order they are read; empty when there is none."""
    reading = read(tuple(cells), frozenset(template or ()))
    statements = reading.statements
    objects = [*exercise.pieces, *exercise.calls]
    methods = {f".{m}" for m in exercise.methods}
    found: list[Use] = []
    chained: set[int] = set()                   # names that start an attribute chain
    for n in followed(statements, exercise.names, scoped=True):
        for name, obj in reading.reached.get(id(n), ()):
            for entry in objects:
                if _is(name, obj, entry):
                    found.append(Use(_shown(n, name), entry, reading.line(n)))
            if name in methods:
                found.append(Use(_shown(n, name), name[1:], reading.line(n)))
        if isinstance(n, ast.Attribute):
            chained.add(id(n.value))
        elif isinstance(n, ast.Call) and _chain(n) is not None:
            chained.add(id(n.args[0]))
        text = _chain(n) if isinstance(n, (ast.Attribute, ast.Call)) else None
        for entry in exercise.given:
            root = entry.split(".")[0]
            hit = (text is not None and (text == entry or text.startswith(entry + "."))) or (
                isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id == root
                and ("." not in entry or id(n) not in chained))
            if hit:
                found.append(Use(_shown(n, entry), entry, reading.line(n)))
    return list(dict.fromkeys(found))


def unread(cells: Iterable[str], exercise: Exercise, template: Iterable[str] | None = None) -> list[str]:
    """What keeps the reading from telling what ``exercise``'s definitions use: anywhere in the
    notebook's own cells, what could change them from afar (code from strings, a namespace read, a
    change to a module, a loader: the page's rules' far findings), and in the definitions and what
    they use, what may reach an attribute out of the reading's sight (a computed ``getattr``, ``vars``,
    a module used as a value, ``getattr`` passed around, a special attribute such as
    ``__subclasses__``). Empty when the reading sees everything they use."""
    reading = read(tuple(cells), frozenset(template or ()))
    statements = reading.statements
    ids = {id(n) for n in followed(statements, exercise.names, scoped=True)}
    found = [_at(f.what, reading.line(f.node)) for f in reading.findings if reading.own[f.cell]
             and (f.kind is Kind.FAR or (f.hides and id(f.node) in ids))]
    return list(dict.fromkeys(found))
