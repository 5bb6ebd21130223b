"""The two verdicts of the rules on a notebook: what the graded definitions use (the rules point)
and what any of the notebook's own cells does that the rules do not allow (the status)."""
from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from .findings import Kind
from .follow import bound_names, followed, last_binding, top_level
from .reading import parse, read


@functools.lru_cache(maxsize=8)
def _blank_bindings(template: tuple[str, ...]) -> dict[str, str]:
    """What the blank notebook's cells bind each name to (its last binding, as ``ast.dump``): the
    same for every submission of a batch, worked out once."""
    blank: dict[str, str] = {}
    for tree in parse(template):
        for node in top_level(tree.body):
            for name in bound_names(node):
                blank[name] = ast.dump(node)
    return blank


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
        and isinstance(node.value.value, str)


def _does_nothing(node: ast.stmt) -> bool:
    """In a function's body: a placeholder, ``return`` of a constant, or a constant put into a
    name of its own (``todo = None``): a body of these computes nothing (red team red3: one such
    line beside the ``...`` kept a blank piece's rules point)."""
    if _placeholder(node):
        return True
    if isinstance(node, ast.Return):
        return node.value is None or isinstance(node.value, ast.Constant)
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Name) for t in node.targets) and isinstance(node.value, ast.Constant)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and (node.value is None
                                                      or isinstance(node.value, ast.Constant))
    return False


def _placeholder(node: ast.stmt) -> bool:
    """What a blank answer holds: ``...``, ``pass``, a docstring, ``raise NotImplementedError``, and
    the lines the blank notebooks keep around the ``...``: ``super().__init__(...)`` and a given
    helper handed the object alone (07's ``SmallStart(self)``). None of them stores or returns
    anything, so a method made of them does nothing of the answer's."""
    if isinstance(node, ast.Pass) or _is_docstring(node):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return node.value.value is Ellipsis
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call) \
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
            return True
        return isinstance(func, ast.Name) and not call.keywords and len(call.args) == 1 \
            and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


_BARE_BASES = frozenset({"Module", "object"})


def is_stub(node: ast.stmt) -> bool:
    """Whether a definition is still only a template: a function whose body computes nothing
    (placeholders such as ``...``, constants: :func:`_does_nothing`), or a class whose only bases are
    ``nn.Module``/object and whose body and methods hold nothing else (a class that names a
    working base is an answer, however short)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return all(_does_nothing(b) for b in node.body)
    if not isinstance(node, ast.ClassDef):
        return False
    bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None) for b in node.bases]
    if node.keywords or not all(b in _BARE_BASES for b in bases):
        return False
    return all(is_stub(b) if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) else _placeholder(b)
               for b in node.body)


def static_uses(cells: Iterable[str], roots: Iterable[str],
                template: Iterable[str] | None = None) -> list[str]:
    """What the definitions of ``roots`` (and every notebook-level name they use) do against the
    rules, read from the notebook's code cells (in order), plus what anywhere in the notebook
    changes the modules it uses, runs code from strings or reads a namespace. Empty when nothing
    is found. Given the blank notebook's cells as ``template``, its cells count as the course's.

    Also a problem: a root with no notebook-level definition at all (the code that answers for it
    cannot be read), and, with ``template``, a root whose definition is still the blank one
    (whatever answered for it, it was not that definition), and one whose definition holds
    nothing but placeholders (:func:`is_stub`: the blank template, whether or not ``template`` is
    known, as in the student's own kernel)."""
    cells = tuple(cells)
    roots = list(roots)
    template = tuple(template) if template is not None else None
    given = frozenset(template or ())
    reading = read(cells, given)
    statements = reading.statements
    found: list[str] = []
    if cells:
        found += [f"no definition of {r} found in the notebook's code" for r in roots if r not in statements]
    if template is not None:
        blank = _blank_bindings(template)
        found += [f"{r} is still the blank template" for r in roots
                  if r in statements and r in blank
                  and ast.dump(last_binding(statements[r], r)) == blank[r]]
    found += [f"{r} is not written yet (its code is only a placeholder such as `...`)" for r in roots
              if r in statements and is_stub(last_binding(statements[r], r))
              and f"{r} is still the blank template" not in found]
    for n in followed(statements, roots):
        for f in reading.by_node.get(id(n), ()):
            if reading.own[f.cell]:
                found.append(f.what)
    found += [f.what for f in reading.findings if f.kind is Kind.FAR and reading.own[f.cell]]
    return list(dict.fromkeys(found))


def suspicious(cells: Iterable[str], numbers: Iterable[int] | None = None,
               given: Iterable[str] | None = None) -> list[str]:
    """Everything in the notebook's own cells that the rules do not allow (a ready-made piece
    alone is allowed outside the graded code: the page's checks use one), for the instructor,
    who should read the notebook: an honest notebook has none. ``numbers``: the cells' numbers in
    the notebook (default 1, 2, ...); ``given``: the blank notebook's code cells (a cell identical
    to one of them is the course's: read for what it binds, not searched)."""
    cells = tuple(cells)
    numbers = list(numbers) if numbers is not None else list(range(1, len(cells) + 1))
    reading = read(cells, frozenset(given or ()))
    found = [f"cell {numbers[f.cell] if f.cell < len(numbers) else f.cell + 1} {f.what}"
             for f in reading.findings if f.kind is not Kind.PIECE and reading.own[f.cell]]
    return list(dict.fromkeys(found))
