"""What runs in a student's Python imports only what that week ships.

A public check (``grader.check``'s test files, nbgrader's visible test cells) and every code cell of
a student notebook run in the student's own Python, which has the week's release of the course
package (:mod:`autograder.shipped`), what Colab preinstalls and the grader (Otter), and nothing of
the instructor's: an ``import autograder`` there fails for every student, solution or not.
"""
from __future__ import annotations

import ast
import re
import sys

import nbformat
import pytest

from autograder import shipped
from instructor import build

ROOT = build.ROOT
NAMES = [n for n in build.registry.notebooks() if (ROOT / "notebooks" / f"{n}.ipynb").exists()]
# What a student's Python has beside the week's course package: the standard library, what Colab
# preinstalls and the notebooks use, and the grader the setup cell installs.
THIRD_PARTY = {"torch", "numpy", "matplotlib", "tqdm", "requests", "otter", "IPython", "google"}
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n.*?### END HIDDEN TESTS\n?", re.DOTALL)


def imported(source: str) -> list[tuple[int, str]]:
    """(line, dotted module) of every absolute import in ``source``, nested ones included."""
    from IPython.core.inputtransformer2 import TransformerManager

    tree = ast.parse(TransformerManager().transform_cell(source))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            # `from course import tinydenoiser` imports a module too
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names
                      if f"{node.module}.{alias.name}" in shipped.module_names()]
    return found


def not_shipped(source: str, week: str) -> list[str]:
    """The imports of ``source`` that a student's Python of week ``week`` cannot satisfy."""
    ships = shipped.module_names(week)
    bad = []
    for line, module in imported(source):
        top = module.partition(".")[0]
        if top == "course":
            ok = module in ships
        else:
            ok = top in sys.stdlib_module_names or top in THIRD_PARTY
        if not ok:
            bad.append(f"line {line}: {module}")
    return bad


def test_the_reader_finds_what_a_student_cannot_import():
    source = ("import torch\nfrom course.handles import student\n\ndef t():\n"
              "    from autograder.checks import answers\n    import course.tinydenoiser\n")
    assert not_shipped(source, "03_attention") == ["line 5: autograder.checks",
                                                   "line 6: course.tinydenoiser"]
    assert not_shipped(source, "08_causal") == ["line 5: autograder.checks"]
    assert not_shipped("from course import tinydenoiser\n", "07_my_transformer") == \
        ["line 1: course.tinydenoiser"]


@pytest.mark.parametrize("name", NAMES)
def test_public_tests_import_only_the_weeks_release(name):
    bad = {f"{path.name} {b}" for path in sorted((ROOT / "notebooks" / "tests" / name).glob("*.py"))
           for b in not_shipped(path.read_text(), name)}
    assert not bad, f"{name}'s public tests import what its release does not ship: {sorted(bad)}"


@pytest.mark.parametrize("name", NAMES)
def test_student_notebook_cells_import_only_the_weeks_release(name):
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    bad = [f"cell {i + 1} {b}" for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
           for b in not_shipped(cell.source, name)]
    assert not bad, f"{name}'s student notebook imports what its release does not ship: {bad}"


@pytest.mark.parametrize("name", NAMES)
def test_nbgrader_release_imports_only_the_weeks_release(name):
    """nbgrader's release keeps a test cell's code outside its hidden block: it runs in the
    student's kernel (and the solution regions are the student's own code)."""
    source = ROOT / "nbgrader" / "source" / name / f"{name}.ipynb"
    if not source.exists():
        pytest.skip("no nbgrader course built")
    nb = nbformat.read(source, as_version=4)
    bad = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("grade"):
            continue
        bad += [f"cell {i + 1} {b}" for b in not_shipped(HIDDEN.sub("", cell.source), name)]
    assert not bad, f"{name}'s nbgrader release imports what its release does not ship: {bad}"


def test_every_public_test_file_is_read():
    """The tests above read something: every notebook has public tests."""
    assert NAMES == build.registry.notebooks()
    assert all(list((ROOT / "notebooks" / "tests" / n).glob("q*.py")) for n in NAMES)
