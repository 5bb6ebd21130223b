"""The master notebooks in solutions/, read: their names in course order, their answers (the cells
tagged ``reference``, the solution lines of answer cells) and what their student notebooks show.

Read by the build (:mod:`instructor.build`), the nbgrader export (:mod:`instructor.nbgrader.source`),
the release's list of the answers it gives away (:mod:`instructor.release`) and the tests.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat

from autograder.master_format import (  # noqa: F401  (re-exported: the tooling reads masters here)
    HIDDEN,
    answer_code,
    cell_source,
    cell_tags,
    raw_mark,
    split_solution,
)

from . import registry

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"


def read_master(name: str) -> nbformat.NotebookNode:
    return nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)


def masters() -> list[str]:
    """The course's notebooks, in course order (course.toml's list, :mod:`instructor.registry`); each
    has its master in solutions/ (the build refuses a course where one is missing or unlisted)."""
    return registry.notebooks()


def reference_code(name: str) -> list[str]:
    """The answers of one master that later notebooks re-use (its cells tagged `reference`)."""
    return [answer_code(cell_source(c)) for c in read_master(name).cells
            if c.cell_type == "code" and "reference" in cell_tags(c)]


def earlier_reference_code(name: str) -> list[str]:
    """Reference answers of every master before `name`, in order; a later one replaces an earlier
    definition of the same name (08's causal Attention replaces 03's)."""
    return [code for earlier in registry.upto(name)[:-1] for code in reference_code(earlier)]


def defined_names(code: str) -> list[str]:
    """The names a piece of reference code defines at its top level (def, class, assignment), in order."""
    import ast

    names: list[str] = []
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            found = []
        names += [n for n in found if n not in names]
    return names


def latest_definitions(blocks: list[str]) -> list[str]:
    """The code blocks whose names are not all defined again by a later block (08's causal
    MyTransformer makes 07's unnecessary), in their order."""
    names = [set(defined_names(code)) for code in blocks]
    return [code for i, code in enumerate(blocks)
            if not names[i] or not names[i] <= set().union(*names[i + 1:])]


def in_solution(nb: nbformat.NotebookNode) -> Iterator[tuple[nbformat.NotebookNode, bool]]:
    """Every cell of a master but the BEGIN/END SOLUTION raw cells, and whether it lies between one
    BEGIN SOLUTION and its END SOLUTION."""
    inside = False
    for cell in nb.cells:
        mark = raw_mark(cell)
        if mark is not None and mark.kind == "SOLUTION":
            inside = mark.what == "BEGIN"
        else:
            yield cell, inside


def answer_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The cells of a master that hold its answers: every cell between a BEGIN SOLUTION and an END
    SOLUTION raw cell (code: otter removes its marked lines, `split_solution`; markdown: removed
    whole), and the code cells tagged `reference`."""
    return [cell for cell, inside in in_solution(nb)
            if inside or (cell.cell_type == "code" and "reference" in cell_tags(cell))]


def shown_text(nb: nbformat.NotebookNode) -> str:
    """Everything of a master that its students are shown: all but the answers and the hidden test
    cases (the public ones go out with the release, in notebooks/tests/)."""
    shown, tests = [], False
    for cell, inside in in_solution(nb):
        text = cell_source(cell)
        mark = raw_mark(cell)
        if mark is not None and mark.kind == "TESTS":
            tests = mark.what == "BEGIN"
        elif tests and HIDDEN.search(text):
            continue
        elif cell.cell_type == "code":
            shown.append(split_solution(text)[1])
        elif cell.cell_type != "raw" and not inside:
            shown.append(text)
    return "\n".join(shown)
