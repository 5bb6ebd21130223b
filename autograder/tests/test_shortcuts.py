"""The shortcut suite (autograder/shortcuts.py): answers built from the course's own pieces that could
stand in for an exercise (subclass, wrapper, delegation, a copied forward) and from each PyTorch
function a "by hand" exercise lists, graded through the real `course grade`, one batch a notebook
with the solution and the blank notebook in it: each shortcut keeps nothing of its question (cap 0),
and the solution and the blank grade exactly as they do alone. The Gradescope zip and `course
nbgrader` grade a sample of them: tests/test_shortcut_routes.py."""
import shutil
from functools import cache
from pathlib import Path

import pytest

from autograder import degenerate, exercise_rules, mutants, shortcuts
from autograder.assignment import ASSIGNMENTS, load

NOTEBOOKS = [p.name for p in sorted(ASSIGNMENTS.iterdir()) if (p / exercise_rules.RULES_FILE).is_file()
             and (mutants.BUILD / f"{p.name}-solution.ipynb").exists() and shortcuts.shortcuts(p.name)]
pytestmark = pytest.mark.slow


@cache
def graded(name: str, tmp_root: str) -> tuple[dict, dict]:
    subs = Path(tmp_root) / name / "submissions"
    written = degenerate.write_submissions(name, subs, shortcuts.shortcuts(name))
    shutil.copy(mutants.BUILD / f"{name}-solution.ipynb", subs / "solution.ipynb")
    shutil.copy(ASSIGNMENTS.parent.parent / "notebooks" / f"{name}.ipynb", subs / "blank.ipynb")
    return mutants.grade_folder(name, subs, Path(tmp_root) / name / "grades"), written


@pytest.fixture(scope="session")
def grading_root(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("shortcut-suite"))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_shortcuts_keep_nothing_of_their_question(name, grading_root):
    rows, written = graded(name, grading_root)
    assert written and degenerate.over_cap(rows, written) == []
    for stem in written:                     # graded, not refused (code that hides what it uses: flagged)
        status = rows[stem]["grading_status"]
        assert status == "ok" or status.startswith("suspicious code"), (stem, status)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_solution_and_the_blank_grade_as_alone(name, grading_root):
    rows, _ = graded(name, grading_root)
    asg = load(name)
    full = {q.name: q.max_points for q in asg.auto}
    assert {q: float(rows["solution"][q]) for q in full} == full
    assert {q: float(rows["blank"][q] or 0) for q in full} == dict.fromkeys(full, 0.0)   # as alone: nothing
    assert rows["solution"]["grading_status"] == rows["blank"]["grading_status"] == "ok"


def test_every_notebook_with_rules_has_shortcuts():
    for p in ASSIGNMENTS.iterdir():
        if exercise_rules.load(p):
            assert shortcuts.shortcuts(p.name), p.name
