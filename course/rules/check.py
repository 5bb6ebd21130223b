"""The two verdicts of the rules on a notebook: what the graded definitions use (the rules point)
and what any of the notebook's own cells does that the rules do not allow (the status)."""
from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from .findings import Kind
from .follow import bound_names, followed, last_binding, top_level
from .reading import parse, read
from .stubs import is_stub


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
