"""The same answers graded on the three routes, `course grade`, the Gradescope zip (its own
run_autograder, part of it under Docker's default seccomp profile, where the sandbox falls back to
`user` mode) and `course nbgrader`, come out the same, question by question.

The class is 06_block's solution and blank notebook and a sample of its shortcut answers
(autograder/shortcuts.py; `course grade` grades them all: tests/autograder/test_shortcuts.py):
the three-line `class Block(DenoiserBlock)` with the GIVEN MultiHead (on every route the sandbox
shows only the week's files), DenoiserBlock's forward copied onto a Block of the notebook's own,
`F.layer_norm` for the layer norm 06 q1 asks for by hand and the
notebook's own `nn.LayerNorm`. Each keeps nothing of its question, on every route; the solution and
the blank grade as they do alone. Slow (minutes): marked `slow`."""
from __future__ import annotations

import pytest
from routes import grade_on_routes, swap

from autograder import shortcuts
from autograder.assignment import load

NAME = "06_block"
SAMPLE = ("denoiser_block", "DenoiserBlock_copy", "layer_norm", "notebook_norm")
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def routes(tmp_path_factory) -> dict:
    """{route: {submission: {question: points}}} for the class on the three routes."""
    answers = {d.name: d for d in shortcuts.shortcuts(NAME) if d.name in SAMPLE}
    assert set(answers) == set(SAMPLE)
    # all but the first under a seccomp filter that refuses namespaces (the `user` sandbox)
    return grade_on_routes(NAME, {label: swap((d.replaces,), d.code) for label, d in answers.items()},
                           tmp_path_factory.mktemp("routes"), gradescope_labels=SAMPLE,
                           seccomp=("blank", *SAMPLE[1:]))


def test_every_route_grades_the_class_the_same(routes):
    assert routes["gradescope"] == routes["course grade"]
    assert routes["nbgrader"] == routes["course grade"]


def test_the_shortcuts_keep_nothing_of_their_question_and_the_rest_as_earned(routes):
    full = {q.name: q.max_points for q in load(NAME).auto}
    by_question = {d.name: d.question for d in shortcuts.shortcuts(NAME) if d.name in SAMPLE}
    for route, rows in routes.items():
        assert rows["solution"] == full, route
        assert sum(rows["blank"].values()) == 0, route
        for label, q in by_question.items():
            assert rows[label][q] == 0, (route, label)
            # the rest as earned: a question built on the same piece (06 q3's NoResidual(Block)) may
            # lose with it; none gains
            assert all(v <= full[k] for k, v in rows[label].items() if k != q), (route, label)
            assert sum(v for k, v in rows[label].items() if k != q) >= sum(full.values()) - full[q] - 1, \
                (route, label)
