"""The course's own answers to one notebook, graded as one class.

The solution, the blank student notebook, every mutant (:mod:`autograder.mutants`), every degenerate
answer (:mod:`autograder.degenerate`) and every shortcut (:mod:`autograder.shortcuts`) of a notebook
go into one folder and through one ``course grade`` batch: one fork server, one start-up, the
same rows whatever suite reads them. The mutation, degenerate and shortcut suites of the tests read
this one class (tests/autograder/conftest.py grades it once per test run and notebook).

File stems say what each answer is: ``solution``, ``blank``, ``mutant__<expect>__<name>``,
``degenerate__<question>__<name>``, ``shortcut__<question>__<name>``.
"""
from __future__ import annotations

import csv
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import degenerate, mutants, shortcuts
from .api import grade
from .config import GradeConfig
from .degenerate import Degenerate
from .mutants import Mutant

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class OwnClass:
    """One notebook's own answers, graded: ``rows`` are grades.csv's rows by file stem; ``out`` the
    output folder (``out / "results"`` holds each row's test cases)."""
    notebook: str
    out: Path
    rows: dict[str, dict] = field(default_factory=dict)
    mutants: dict[str, Mutant] = field(default_factory=dict)
    degenerates: dict[str, Degenerate] = field(default_factory=dict)
    shortcuts: dict[str, Degenerate] = field(default_factory=dict)


def write_class(notebook: str, folder: Path) -> OwnClass:
    """Every own answer of ``notebook`` as a notebook in ``folder``; the class, not graded yet."""
    folder.mkdir(parents=True, exist_ok=True)
    own = OwnClass(notebook, folder)
    own.mutants = mutants.write_notebooks(
        folder, {f"mutant__{m.expect}__{m.name}": m for m in mutants.load_mutants(notebook)},
        mutants.mutant_notebook)
    own.degenerates = mutants.write_notebooks(
        folder, {f"degenerate__{d.question}__{d.name}": d for d in degenerate.degenerates(notebook)},
        degenerate.degenerate_notebook)
    own.shortcuts = mutants.write_notebooks(
        folder, {f"shortcut__{d.question}__{d.name}": d for d in shortcuts.shortcuts(notebook)},
        degenerate.degenerate_notebook)
    shutil.copy(mutants.BUILD / f"{notebook}-solution.ipynb", folder / "solution.ipynb")
    shutil.copy(ROOT / "notebooks" / f"{notebook}.ipynb", folder / "blank.ipynb")
    return own


def grade_class(notebook: str, root: Path, workers: int = 2) -> OwnClass:
    """Write and grade the class of ``notebook`` under ``root`` (``root/submissions``, ``root/grades``)."""
    own = write_class(notebook, root / "submissions")
    own.out = root / "grades"
    grade(GradeConfig(submissions=(root / "submissions",), assignment=notebook, out=own.out,
                      workers=workers, progress=False, similarity=False))
    with open(own.out / "grades.csv", newline="") as f:
        own.rows = {Path(row["file"]).stem: row for row in csv.DictReader(f)}
    return own
