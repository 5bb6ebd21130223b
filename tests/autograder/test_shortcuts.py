"""The shortcut suite (autograder/shortcuts.py): answers built from the course's own pieces that could
stand in for an exercise (subclass, wrapper, delegation, a copied forward) and from each PyTorch
function a "by hand" exercise lists, graded through the engine in one batch a notebook with the
solution, the blank notebook and the other own answers (:mod:`autograder.own_class`): each shortcut
keeps nothing of its question (cap 0), and the solution and the blank grade exactly as they do
alone. The Gradescope zip and `course nbgrader` grade a sample of them:
tests/instructor/test_shortcut_routes.py."""

import pytest

from autograder import degenerate, exercise_rules, mutants, shortcuts
from autograder.assignment import ASSIGNMENTS, load

NOTEBOOKS = [p.name for p in sorted(ASSIGNMENTS.iterdir()) if (p / exercise_rules.RULES_FILE).is_file()
             and (mutants.BUILD / f"{p.name}-solution.ipynb").exists() and shortcuts.shortcuts(p.name)]
pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_shortcuts_keep_nothing_of_their_question(name, own_class):
    batch = own_class(name)
    rows, written = batch.rows, batch.shortcuts
    assert written and degenerate.over_cap(rows, written) == []
    for stem in written:                     # graded, not refused (code that hides what it uses: flagged)
        status = rows[stem]["grading_status"]
        assert status == "ok" or status.startswith("suspicious code"), (stem, status)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_solution_and_the_blank_grade_as_alone(name, own_class):
    rows = own_class(name).rows
    asg = load(name)
    full = {q.name: q.max_points for q in asg.auto}
    assert {q: float(rows["solution"][q]) for q in full} == full
    assert {q: float(rows["blank"][q] or 0) for q in full} == dict.fromkeys(full, 0.0)   # as alone: nothing
    assert rows["solution"]["grading_status"] == rows["blank"]["grading_status"] == "ok"


def test_every_notebook_with_rules_has_shortcuts():
    for p in ASSIGNMENTS.iterdir():
        if exercise_rules.load(p):
            assert shortcuts.shortcuts(p.name), p.name
