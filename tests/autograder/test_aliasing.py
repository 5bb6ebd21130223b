"""The aliasing suite (autograder/aliasing.py): each question's forbidden piece stored into an object
under another name (a function's return value, ``:=``, a ``match`` capture, ``setdefault`` in a
helper, a method storing through ``self``, a callable from a subscript, a class attribute, a
generator, a default argument, a closure, a decorator, a function's attribute, the graded class
changed through a return value or a local name) and read back by the graded definition. Each keeps
none of its question's points or is held for a person (``suspicious code`` naming the question):
read as the judge reads it, in seconds, and graded through ``course grade``, one batch a notebook."""
import csv

import nbformat
import pytest

from autograder import aliasing, assignment, degenerate, exercise_rules, mutants
from autograder.api import grade
from autograder.config import GradeConfig
from autograder.notebook import read_notebook, setup_cell

NOTEBOOKS = [p.name for p in sorted(assignment.ASSIGNMENTS.iterdir()) if exercise_rules.load(p)
             and (mutants.BUILD / f"{p.name}-solution.ipynb").exists()]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_aliasing_answer_is_barred_or_held(name):
    folder = assignment.ASSIGNMENTS / name
    template = assignment.template_code(name, folder) or []
    rules = exercise_rules.load(folder)
    answers = aliasing.aliasing(name)
    assert len(answers) >= len(aliasing.FORMS)
    missed = []
    for d in answers:
        data = nbformat.writes(degenerate.degenerate_notebook(d)).encode()
        cells, problem = read_notebook(data, setup_cell(template))
        assert problem is None and cells, (d.name, problem)
        sources = [c["source"] for c in cells if not c["ignore"]]
        if not (exercise_rules.verdict(sources, template, rules[d.question], d.question)
                or exercise_rules.held(sources, template, rules[d.question], d.question)):
            missed.append(f"{d.question} {d.name}")
    assert not missed, missed


@pytest.mark.e2e
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_aliasing_answers_keep_nothing_or_are_held(name, tmp_path):
    written = mutants.write_notebooks(tmp_path / "submissions",
                                      {f"alias__{d.question}__{d.name}": d for d in aliasing.aliasing(name)},
                                      degenerate.degenerate_notebook)
    grade(GradeConfig(submissions=(tmp_path / "submissions",), assignment=name, out=tmp_path / "grades",
                      workers=2, progress=False, similarity=False))
    with open(tmp_path / "grades" / "grades.csv", newline="") as f:
        rows = {r["file"].rsplit("/", 1)[-1].removesuffix(".ipynb"): r for r in csv.DictReader(f)}
    over = [why for stem, d in written.items() if (why := aliasing.contained(rows[stem], d))]
    assert not over, over
