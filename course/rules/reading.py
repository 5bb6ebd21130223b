"""One notebook's code read against the rules: every cell parsed as IPython runs it, the
scopes and bindings of the first pass, and the findings of the second, by the node they are about."""
from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from .checker import Checker
from .findings import Finding, Kind
from .magics import strip_magics
from .scopes import Binder, Scopes

_UNREADABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


@functools.lru_cache(maxsize=4096)
def stripped(source: str) -> str:
    """The cell as the runner and Jupyter run it, as plain Python (:func:`strip_magics`: IPython's
    own transformation first, prompts, magics and ``!cmd`` included). Never the raw text: a line
    such as ``In [1]: x = 2`` is valid Python that binds nothing, while IPython strips the prompt
    and runs ``x = 2``."""
    return strip_magics(source)


def parse(cells: Iterable[str]) -> list[ast.Module]:
    """The cells that parse, as syntax trees."""
    trees = []
    for source in cells:
        try:
            trees.append(ast.parse(stripped(source)))
        except _UNREADABLE:
            continue
    return trees


class Reading:
    """One notebook's code read against the rules: its scopes, bindings and findings. ``given``: the
    blank notebook's cells (a cell identical to one of them is the course's, not the notebook's own)."""

    def __init__(self, cells: tuple[str, ...], given: frozenset[str]) -> None:
        self.cells = cells
        self.own = [c not in given for c in cells]
        self.trees: list[tuple[int, ast.Module]] = []
        for i, source in enumerate(cells):
            try:
                self.trees.append((i, ast.parse(stripped(source))))
            except _UNREADABLE:
                continue
        self.scopes = Scopes()
        self.scopes.given_cells = {i for i, own in enumerate(self.own) if not own}
        self.findings: list[Finding] = []
        self.reached: dict[int, list[tuple[str, object]]] = {}     # what each node reaches
        binder = Binder(self.scopes)
        for i, tree in list(self.trees):
            try:
                for stmt in tree.body:
                    binder.run(stmt, self.scopes.module, i)
            except RecursionError:
                self.findings.append(Finding(i, tree, "has code nested too deep to read", Kind.FAR))
        anywhere = self.scopes.anywhere()
        for i, tree in self.trees:
            try:
                Checker(self.scopes, self.findings, anywhere, i, self.reached).visit(tree)
            except RecursionError:
                self.findings.append(Finding(i, tree, "has code nested too deep to read", Kind.FAR))
        self.by_node: dict[int, list[Finding]] = {}
        for f in self.findings:
            self.by_node.setdefault(id(f.node), []).append(f)

    @functools.cached_property
    def statements(self) -> dict:
        """:func:`course.rules.follow.live` of the notebook's cells: worked out once per reading,
        though each question's rules and each check of the rules ask for it."""
        from .follow import live
        return live((tree for _, tree in self.trees), self.module_names())

    @functools.cached_property
    def cell_of(self) -> dict[int, int]:
        """The cell each node of the notebook's code is in, by the node's id."""
        return {id(n): i for i, tree in self.trees for n in ast.walk(tree)}

    def line(self, node: ast.AST) -> str:
        """The line of the notebook's code a node is on, as written (empty when it is not known)."""
        cell, number = self.cell_of.get(id(node)), getattr(node, "lineno", 0)
        if cell is None or number < 1:
            return ""
        lines = stripped(self.cells[cell]).split("\n")
        return lines[number - 1].strip() if number <= len(lines) else ""

    def module_names(self) -> frozenset[str]:
        """The notebook-level names bound to modules only."""
        return frozenset(name for name, bindings in self.scopes.module.bound.items()
                         if bindings and all(b.kind == "module" for b in bindings))


@functools.lru_cache(maxsize=8)
def read(cells: tuple[str, ...], given: frozenset[str]) -> Reading:
    return Reading(cells, given)
