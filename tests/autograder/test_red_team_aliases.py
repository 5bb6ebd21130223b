"""Attacks on the static rules, kept as they were written: each puts a piece its question forbids
into the graded code through a form that is easy not to follow (a function's
local name for a notebook list, a default argument, `:=`, `[x][0]`, a class attribute, `with ... as`,
`match`, `return x.append(...)`, a store onto `[Block][0]` or `(B := Block)`, a star import that
rebinds a name, a `%%time` body with an IPython prompt). Read as the judge reads a submission
(tests/support/fixtures/red_team_aliases.json): the question's own rules take its points, or the
row is held for a person. Seconds, without grading."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import nbformat
import pytest

from autograder import assignment, exercise_rules, mutants
from autograder.notebook import read_notebook, setup_cell

ATTACKS = json.loads((Path(__file__).resolve().parents[1] / "support" / "fixtures" /
                      "red_team_aliases.json").read_text())


def _defines(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))} | \
        {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def _notebook(attack: dict) -> nbformat.NotebookNode:
    nb = mutants.solution_notebook(attack["notebook"])
    for name, code in attack["swaps"].items():
        [c for c in nb.cells if c.cell_type == "code" and name in _defines(c.source)][-1].source = code
    for name, code in attack["extra_after"]:
        at = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and name in _defines(c.source)][-1]
        nb.cells.insert(at + 1, nbformat.v4.new_code_cell(code))
    return nb


@pytest.mark.parametrize("attack", ATTACKS, ids=[a["label"] for a in ATTACKS])
def test_each_attack_loses_its_question_or_is_held(attack):
    name, q = attack["notebook"], attack["question"]
    folder = assignment.ASSIGNMENTS / name
    template = assignment.template_code(name, folder) or []
    rules = exercise_rules.load(folder)
    cells, problem = read_notebook(nbformat.writes(_notebook(attack)).encode(), setup_cell(template))
    assert problem is None and cells
    sources = [c["source"] for c in cells if not c["ignore"]]
    barred = exercise_rules.verdict(sources, template, rules.get(q), q)
    held = [line for r_q, r in rules.items() for line in exercise_rules.held(sources, template, r, r_q)]
    if attack["label"].endswith("_ctrl") or attack["label"].startswith("ctrl"):
        assert barred, f"{attack['label']}: the plain form must cost {q} its points"
    else:
        assert barred or held, f"{attack['label']}: {q} keeps its points and the row is not held"
