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


def test_a_hold_is_reported_under_the_question_whose_code_it_is_about():
    """A Block's forward reached by GPT too (it uses Block), and by a question whose reading
    reaches it on the way: the hold is Block's question's, said once."""
    from autograder.exercise_rules import owners

    cells = ["class SelfAttention(nn.Module):\n    pass\n",
             "steps = []\n\nclass Block(nn.Module):\n"
             "    def forward(self, x):\n        return steps[0](self, x)\n",
             "class GPT(nn.Module):\n    pass\n"]
    why = "uses `steps`, a notebook-level object (in the line `return steps[0](self, x)`)"
    found = {"q2": [f"q2 (SelfAttention) {why}"], "q4": [f"q4 (Block) {why}"], "q5": [f"q5 (GPT) {why}"]}
    names = {"q2": ["SelfAttention"], "q4": ["Block"], "q5": ["GPT"]}
    assert owners(found, cells, names) == [f"q4 (Block) {why}"]
    # a line no graded definition holds (a store elsewhere in the notebook): the first question
    other = "stores into `x` (in the line `shelf.append(piece)`)"
    assert owners({"q2": [f"q2 (SelfAttention) {other}"], "q4": [f"q4 (Block) {other}"]}, cells, names) \
        == [f"q2 (SelfAttention) {other}"]
