"""A class of nbgrader submissions, for the tests and the benchmark that grade one through nbgrader's
real commands (tests/instructor/test_nbgrader_grading.py, benchmarks/nbgrader_grading.py): the master's
answers written into a released notebook, mutants of it, where `nbgrader collect` puts a submission, and
`nbgrader export`'s CSV read back.
"""
from __future__ import annotations

from pathlib import Path


def filled_notebook(released, answers: dict[str, str]):
    """A released notebook with the master's answers written in (what a student with the model
    answers would submit)."""
    import copy

    nb = copy.deepcopy(released)
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in answers and cell.metadata.nbgrader.get("solution"):
            cell.source = answers[gid]
    return nb


def mutant_notebook(filled, mutant):
    """`filled` with the answer cell that defines `mutant.replaces` swapped for the mutant's code
    (the last such cell, as autograder.mutants does for Otter's notebook)."""
    import copy

    from autograder.mutants import defines

    nb = copy.deepcopy(filled)
    cells = [c for c in nb.cells if c.cell_type == "code" and mutant.replaces in defines(c.source)
             and not c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    if not cells:
        raise ValueError(f"{mutant.notebook}/{mutant.name}: no cell defines {mutant.replaces}")
    cells[-1].source = mutant.code
    return nb


def pick_mutants(name: str, fail: int = 3, passing: int = 1) -> list:
    """Mutants of one notebook for a comparison: `fail` wrong answers spread over the questions
    (one per question in turn), then `passing` alternative right answers."""
    from autograder.mutants import load_mutants

    mutants = load_mutants(name)
    by_question: dict[str, list] = {}
    for m in mutants:
        if m.expect == "fail":
            by_question.setdefault(m.question, []).append(m)
    picked: list = []
    while len(picked) < fail and any(by_question.values()):
        for q in list(by_question):
            if by_question[q] and len(picked) < fail:
                picked.append(by_question[q].pop(0))
    return picked + [m for m in mutants if m.expect == "pass"][:passing]


def submit(root: Path, name: str, student: str, nb) -> Path:
    """Put a notebook where `nbgrader collect` would: submitted/<student>/<name>/<name>.ipynb."""
    import nbformat

    folder = root / "submitted" / student / name
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{name}.ipynb")
    return folder / f"{name}.ipynb"


def read_export(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    """`nbgrader export`'s CSV as {(assignment, student): row}."""
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        return {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
