"""Correct answers in other styles score the same on the three routes: `course grade`, the
Gradescope zip and `course nbgrader` (tests/support/routes.py), notebook by notebook.

Every hand-written correct answer of the notebook (autograder/assignments/NN_name/correct/) and two
generated ones (the one with the most rewrites at once, and one that starts with `%%time`) go
through `course nbgrader`; the solution, the blank and the first generated one also through the
Gradescope zip (its own run_autograder, a submission at a time, the slowest route). Each gets full
marks, and the blank notebook nothing. `course grade` grades every alternative in
tests/autograder/test_alternatives.py. Slow (about a minute a notebook)."""
from __future__ import annotations

import pytest
from routes import auto_questions, grade_on_routes, swap

from autograder import alternatives
from autograder.assignment import load
from instructor import build

pytestmark = pytest.mark.e2e


def _sample(name: str) -> dict[str, alternatives.Alternative]:
    every = alternatives.alternatives(name)
    written = [a for a in every if a.origin == "written"]
    # the generated answer with every rewrite at once, and one whose cell starts with a magic
    generated = [a for a in every if a.origin == "generated"]
    combined = max(generated, key=lambda a: (a.why == "all_at_once", len(a.code)))
    magic = next(a for a in generated if a.why == "time_magic")
    return {a.label.replace("-", "_"): a for a in [*written, combined, magic]}


@pytest.mark.parametrize("name", build.registry.notebooks())
def test_correct_alternatives_get_full_marks_on_every_route(name, tmp_path):
    sample = _sample(name)
    combined = next(label for label, a in sample.items() if a.origin == "generated")
    routes = grade_on_routes(name, {label: swap(a.replaces, a.code) for label, a in sample.items()},
                             tmp_path, gradescope_labels=(combined,), routes=("gradescope", "nbgrader"))
    full = {q.name: q.max_points for q in load(name).auto}
    assert set(auto_questions(name)) == set(full)
    for route, rows in routes.items():
        for label, points in rows.items():
            if label == "blank":
                assert sum(points.values()) == 0, (route, points)
            else:
                assert points == full, (route, label, points)
