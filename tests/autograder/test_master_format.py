"""The master notebook format has one reader: autograder/master_format.py."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_raw_cell

from autograder import master_format as mf

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]

ANSWER = """# BEGIN PROMPT
def Twice(x):
    ...
# END PROMPT
# BEGIN SOLUTION NO PROMPT
def Twice(x):
    return 2 * x
# END SOLUTION
y = 3  # SOLUTION
shown = 1"""


def _master() -> list:
    return [
        new_raw_cell("# ASSIGNMENT CONFIG\nname: 99_toy"),
        new_markdown_cell("# lesson"),
        new_raw_cell("# BEGIN QUESTION\nname: q1\npoints: [1, 2]"),
        new_markdown_cell("**Question 1**"),
        new_raw_cell("# BEGIN SOLUTION"),
        new_code_cell(ANSWER),
        new_raw_cell("# END SOLUTION"),
        new_raw_cell("# BEGIN TESTS"),
        new_code_cell('""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n'
                      'def test_a(Twice): pass'),
        new_raw_cell("# END TESTS"),
        new_raw_cell("# END QUESTION"),
        new_raw_cell("# BEGIN QUESTION\nname: q2\nmanual: true"),
        new_raw_cell("# BEGIN SOLUTION"),
        new_markdown_cell("the model answer"),
        new_raw_cell("# END SOLUTION"),
        new_raw_cell("# END QUESTION"),
        new_markdown_cell("after"),
    ]


def test_walk_says_where_each_cell_lies():
    places = [(p.index, p.question.name if p.question else None, p.region) for p in mf.walk(_master())]
    assert places == [(1, None, None), (3, "q1", None), (5, "q1", "solution"), (8, "q1", "tests"),
                      (13, "q2", "solution"), (16, None, None)]


def test_questions_read_their_config():
    q1, q2 = mf.questions(_master())
    assert (q1.name, q1.points, q1.total, q1.manual) == ("q1", [1, 2], 3.0, False)
    assert (q2.name, q2.points, q2.total, q2.manual) == ("q2", None, 0.0, True)


def test_an_answer_cell_splits_into_what_students_write_and_what_they_see():
    answer, shown = mf.split_solution(ANSWER)
    assert answer == "def Twice(x):\n    return 2 * x\ny = 3"
    assert shown == "def Twice(x):\n    ...\nshown = 1"
    assert mf.answer_code(ANSWER) == "def Twice(x):\n    return 2 * x\ny = 3\nshown = 1"


def test_the_committed_masters_read_the_same_through_nbformat_and_plain_json():
    import json
    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        as_node = [(p.index, p.region) for p in mf.walk(nbformat.read(path, as_version=4).cells)]
        as_json = [(p.index, p.region) for p in mf.walk(json.loads(path.read_text())["cells"])]
        assert as_node == as_json, path.name


def test_no_other_module_parses_the_markers():
    """A marker pattern (`BEGIN\\s+SOLUTION`, `BEGIN\\s+QUESTION`, ...) is written in master_format only."""
    pattern = re.compile(r"(BEGIN|END)(\\\\s\+|\\s\+)(SOLUTION|QUESTION|TESTS|PROMPT|TEST)")
    found = [str(p.relative_to(ROOT)) for package in ("course", "autograder", "instructor")
             for p in (ROOT / package).rglob("*.py")
             if "assignments" not in p.parts and p.name != "master_format.py"
             and pattern.search(p.read_text())]
    assert found == []
