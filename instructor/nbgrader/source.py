"""A master as an nbgrader source notebook (nbgrader/source/NN_name/NN_name.ipynb).

How a master's cells become nbgrader cells (grade_ids in brackets):
- a code answer cell (a cell with solution lines, inside BEGIN/END SOLUTION): an "autograded answer"
  cell [qN-answer, qN-answer_2, ...]. What Otter would show the student (the prompt, `x = ...` for
  `x = 1  # SOLUTION`) stays in the cell; each answer becomes a `### BEGIN SOLUTION` /
  `### END SOLUTION` region, which `nbgrader generate_assignment` removes.
- the answer of a manual question (`manual: true`): a "manually graded answer" cell with the
  question's points, on its markdown answer (else its last code answer) [qN-answer]; its other
  answer cells are answer cells without points.
- every test case: its own "autograder tests" cell with the case's points under Otter's rules
  (autograder/assignment.py `resolve_points`) [qN-test_name]; a question with `all_or_nothing`
  gets one test cell with all its cases [qN-tests]. Hidden cases sit inside
  `### BEGIN HIDDEN TESTS` / `### END HIDDEN TESTS`, so released notebooks never hold them. The
  test code is the master's, unchanged; it runs in the student's kernel through
  `course.nbgrader_check.check` (student package: it ships with the notebook), exactly as
  `grader.check` runs it (the handles of course/handles.py work in-process).
- every other cell (lesson text, GIVEN code, the setup cell): read-only ("locked"), so nbgrader's
  checksums report and undo any edit at autograde [given_NN, text_NN].
- cells the Otter build skips when grading (tagged `otter_ignore`: long training runs and the
  plots made from them) get a grade_id ending in `-skipped`; the course's nbgrader_config.py runs
  autograde with `SkipUngraded` (:mod:`instructor.nbgrader.plugins`), which does not run them, as
  `course grade` does not.
- the setup cell is the nbgrader one below (no Otter, no Colab): under `nbgrader validate` and
  `autograde` it seeds the random numbers and turns quick mode on, as `course grade` does.

Per-question points: every grade_id starts with its question (`q3-test_hot_and_cold`), and
`nbgrader export` (with the config's `QuestionCsvExport`) adds them up per question, which is what
`course grade` reports per question.
"""
from __future__ import annotations

import ast
import re
from typing import Any, TypedDict, cast

from autograder import master_format

SETUP = '''\
# GIVEN: setup. Run this cell first. It finds the course package (the `course` folder next to this
# notebook) and loads the tools of the course. The cells marked "test" below each answer are the
# checks: run them after your answer (nbgrader's Validate button runs them all).
NOTEBOOK = "{name}"

import os, sys

for _folder in (".", ".."):
    if os.path.isdir(os.path.join(_folder, "course")):
        sys.path.insert(0, os.path.abspath(_folder))
        break
# downloaded stories and trained weights: once per user, not once per notebook
os.environ.setdefault("COURSE_DATA_CACHE", os.path.expanduser("~/.cache/transformer-course"))
if os.environ.get("NBGRADER_EXECUTION"):       # nbgrader validate / autograde: as the course's grader
    os.environ["COURSE_QUICK"] = "1"           # training runs a few steps only

import math
import numpy as np
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm.auto import tqdm
from course import *
from course.training import Seed, Steps

if os.environ.get("NBGRADER_EXECUTION"):
    import random
    random.seed(0); np.random.seed(0); torch.manual_seed(0)
print(f"Ready: torch {{torch.__version__}}, running on {{device}}.")'''

TEXT_STUB = "_Type your answer here, replacing this text._"      # what Otter's student notebook shows

_TEST_CONFIG = master_format.TEST_CONFIG
_BEGIN_SOLUTION = master_format.SOLUTION_BEGIN_LINE
_END_SOLUTION = master_format.SOLUTION_END_LINE
_PROMPT_MARK = master_format.PROMPT_LINE_MARK
_SOLUTION_LINE = master_format.SOLUTION_TAIL
_SOLUTION_LINE_NO_PROMPT = master_format.SOLUTION_TAIL_NO_PROMPT
_NBGRADER_MARKS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                   "BEGIN MARK SCHEME", "END MARK SCHEME")


def _src(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def _otter_prompt(line: str) -> str:
    """What Otter shows students for a line ending in `# SOLUTION` (`x = 1  # SOLUTION` -> `x = ...`)."""
    from otter.assign.solutions import (
        solution_assignment_regex,
        solution_assignment_sub,
        solution_line_regex,
        solution_line_sub,
    )
    for regex, sub in ((solution_assignment_regex, solution_assignment_sub),
                       (solution_line_regex, solution_line_sub)):
        m = regex.match(line)
        if m:
            return sub(m)
    return line


def answer_source(source: str) -> str:
    """A master's answer cell in nbgrader's form: what Otter shows the student stays (prompt blocks,
    scaffolding, `x = ...`), and every answer becomes a `### BEGIN SOLUTION` region."""
    out: list[str] = []
    indent: str | None = None                 # inside a solution block: its indentation
    run: list[str] = []                       # consecutive `# SOLUTION` lines: one region for them
    lead = ""

    def flush() -> None:
        if run:
            out.extend(_otter_prompt(line) for line in run if not _SOLUTION_LINE_NO_PROMPT.search(line))
            out.append(lead + "### BEGIN SOLUTION")
            out.extend(_SOLUTION_LINE.sub("", _SOLUTION_LINE_NO_PROMPT.sub("", line)) for line in run)
            out.append(lead + "### END SOLUTION")
            run.clear()

    for line in source.split("\n"):
        begin = _BEGIN_SOLUTION.match(line)
        marked = indent is None and not begin and \
            bool(_SOLUTION_LINE_NO_PROMPT.search(line) or _SOLUTION_LINE.search(line))
        this_lead = cast(re.Match, re.match(r"\s*", line)).group(0)       # \s* always matches
        if not marked or this_lead != lead:
            flush()
        if marked:
            lead = this_lead
            run.append(line)
            continue
        if indent is not None:
            if _END_SOLUTION.match(line):
                out.append(indent + "### END SOLUTION")
                indent = None
            else:
                out.append(line)
        elif _PROMPT_MARK.match(line):
            continue
        elif begin:
            indent = begin.group(1)
            if not begin.group(2):
                out.append(indent + "...")     # Otter's prompt for a block without its own
            out.append(indent + "### BEGIN SOLUTION")
        else:
            out.append(line)
    flush()
    if indent is not None:
        raise ValueError(f"BEGIN SOLUTION without END SOLUTION in:\n{source}")
    return "\n".join(out)


def _has_answer(source: str) -> bool:
    return any(_BEGIN_SOLUTION.match(line) or _SOLUTION_LINE.search(line)
               or _SOLUTION_LINE_NO_PROMPT.search(line) for line in source.split("\n"))


def parse_test_cell(source: str) -> tuple[dict, str, str, str]:
    """A master's test cell -> (config, body without the config, test function name, call text)."""
    import yaml

    m = _TEST_CONFIG.match(source)
    config = (yaml.safe_load(m.group(1)) or {}) if m else {}
    body = source[m.end():] if m else source
    tree = ast.parse(body)
    last = tree.body[-1] if tree.body else None
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
            and isinstance(last.value.func, ast.Name)):
        raise ValueError(f"a test case must end with the call of its test function:\n{source}")
    lines = body.split("\n")
    head = "\n".join(lines[:last.lineno - 1]).rstrip("\n")
    call = cast(str, ast.get_source_segment(body, last.value))     # parsed from body: it has one
    return config, head, last.value.func.id, call


def _test_block(question: str, config: dict, head: str, fname: str, call: str) -> str:
    """One test case in a test cell: its function, then `check` running it."""
    hidden = bool(config.get("hidden", False))
    name = f"{question} {fname}"
    message = config.get("failure_message") or "A test failed."
    run = (f"check(lambda: {call},\n      {message!r},\n      name={name!r}"
           + (", hidden=True)" if hidden else ")"))
    code = f"from course.nbgrader_check import check\n\n{head}\n\n{run}"
    if hidden:
        return f"### BEGIN HIDDEN TESTS\n{code}\n### END HIDDEN TESTS"
    return code


def _fmt_points(p: float) -> str:
    return f"{p:g} point" + ("" if p == 1 else "s")


class _Question(TypedDict):
    """A question of a master while :func:`source_notebook` reads it."""
    name: str
    points: Any                             # as its config says: None, a number or a list
    points_total: float
    manual: bool
    all_or_nothing: bool
    cases: list[tuple[dict, str, str, str]]     # parse_test_cell's
    markdown: list[tuple[int, str]]         # (index in cells, grade id) of its answer cells
    code: list[tuple[int, str]]
    answers: int


def source_notebook(name: str, master=None):
    """The nbgrader source notebook of one master, and {grade_id: answer} (the master's answers as a
    student would write them: the filled-in notebook Otter grades, cell by cell)."""
    import nbformat

    from ..masters import read_master

    master = master or read_master(name)
    build = _Build(name)
    for cell in master.cells:
        build.add(cell)
    nb = nbformat.v4.new_notebook()
    nb.cells = build.cells
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{name[:2]}-nbg-{i:03d}"
        _check_marks(name, cell)
    return nb, build.answers


class _Build:
    """The nbgrader cells of one master, made as :func:`source_notebook` reads its cells in order:
    what a cell becomes depends on where it is (in which question, in which block)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cells: list = []
        self.answers: dict[str, str] = {}
        self.question: _Question | None = None
        self.block: str | None = None           # "solution" / "tests" / "prompt"
        self.n_locked = 0

    def add(self, cell) -> None:
        """The next cell of the master."""
        text = _src(cell)
        if cell.cell_type == "raw":
            self._mark(cell)
        elif self.question is not None and self.block == "tests":
            self.question["cases"].append(parse_test_cell(text))
        elif "colab" in _tags(cell):                # the Otter notebook's Colab badge: not on a hub
            pass
        elif "setup" in _tags(cell):
            self.n_locked += 1
            self.cells.append(_new(cell, SETUP.format(name=self.name),
                                   _meta(f"given_{self.n_locked:02d}", locked=True)))
        elif self.question is not None and self.block == "solution":
            self._in_answer(cell, text, self.question)
        else:
            self._locked(cell)

    def _mark(self, cell) -> None:
        """A raw cell: a question or a block begins or ends (any other raw cell is dropped)."""
        mark = master_format.raw_mark(cell)
        if mark is None:
            return
        what, kind = mark.what, mark.kind
        if kind == "QUESTION" and what == "BEGIN":
            q = master_format.question(cell)
            self.question = {"name": q.name, "points": q.points, "points_total": q.total,
                             "manual": q.manual, "all_or_nothing": q.all_or_nothing,
                             "cases": [], "markdown": [], "code": [], "answers": 0}
        elif kind == "QUESTION":
            self._end_question()
            self.question = None
        elif kind == "PROMPT":
            raise ValueError(f"{self.name}: prompt blocks in raw cells are not supported; "
                             "use # BEGIN PROMPT lines inside the answer cell")
        elif what == "BEGIN":
            self.block = kind.lower()
        else:
            self.block = None

    def _in_answer(self, cell, text: str, question: _Question) -> None:
        """A cell inside a question's solution block: an answer (markdown, or code with solution
        lines), scaffolding the student may change, or a locked cell."""
        if cell.cell_type == "markdown":
            question["answers"] += 1
            gid = _answer_id(question)
            question["markdown"].append((len(self.cells), gid))
            self.cells.append(_new(cell, text, _meta(gid, grade=True, solution=True, points=0.0)))
            self.answers[gid] = text
        elif cell.cell_type == "code" and _has_answer(text):
            from ..masters import answer_code

            question["answers"] += 1
            gid = _answer_id(question) + ("-skipped" if "otter_ignore" in _tags(cell) else "")
            question["code"].append((len(self.cells), gid))
            self.cells.append(_new(cell, answer_source(text), _meta(gid, solution=True)))
            self.answers[gid] = answer_code(text)
        elif (cell.cell_type == "code" and "otter_ignore" not in _tags(cell)
                and not text.startswith("# GIVEN")):           # a GIVEN cell is the course's, even here
            self.cells.append(_new(cell, text, {}))              # scaffolding the student may change
        else:
            self._locked(cell)

    def _locked(self, cell) -> None:
        """A cell the student may not change (lesson text, GIVEN code): numbered in order."""
        self.n_locked += 1
        kind = "text" if cell.cell_type == "markdown" else "given"
        gid = f"{kind}_{self.n_locked:02d}" + ("-skipped" if "otter_ignore" in _tags(cell) else "")
        self.cells.append(_new(cell, _src(cell), _meta(gid, locked=True)))

    def _end_question(self) -> None:
        """The question's end: its points go on its manual answer, or its test cells follow."""
        q = cast(_Question, self.question)       # called at the end of a question
        if q["manual"]:
            self._grade_manual(q)
            return
        if q["markdown"]:
            raise ValueError(f"{self.name} {q['name']}: a markdown answer in a question checked "
                             "automatically")
        if q["cases"]:
            self._test_cells(q)

    def _grade_manual(self, q: _Question) -> None:
        """A manual question's points go on its markdown answer, else on its last code answer."""
        targets = q["markdown"] or q["code"]
        if not targets:
            raise ValueError(f"{self.name} {q['name']}: a manual question without an answer cell")
        if len(q["markdown"]) > 1:
            raise ValueError(f"{self.name} {q['name']}: more than one markdown answer")
        idx, _gid = targets[-1]
        self.cells[idx].metadata["nbgrader"].update(grade=True, points=q["points_total"])

    def _test_cells(self, q: _Question) -> None:
        """A test cell per case with its points under Otter's rules; one cell of all the cases for
        a question that is all or nothing."""
        import nbformat

        from autograder.assignment import resolve_points

        cases = q["cases"]
        points = resolve_points(q["points"], [c[0].get("points") for c in cases])
        if q["all_or_nothing"]:
            blocks = [_test_block(q["name"], *case) for case in cases]
            header = f"# test {q['name']}: all of these checks or none ({_fmt_points(sum(points))})"
            text = header + "\n" + "\n\n".join(blocks)
            self.cells.append(nbformat.v4.new_code_cell(
                text, metadata=_meta(f"{q['name']}-tests", grade=True, locked=True, points=sum(points))))
            return
        for (config, head, fname, call), p in zip(cases, points, strict=True):
            hidden = bool(config.get("hidden", False))
            header = (f"# test {q['name']} {fname} ({_fmt_points(p)})"
                      + (": hidden, run when your notebook is graded" if hidden else ""))
            text = header + "\n" + _test_block(q["name"], config, head, fname, call)
            self.cells.append(nbformat.v4.new_code_cell(
                text, metadata=_meta(f"{q['name']}-{fname}", grade=True, locked=True, points=p)))


def _check_marks(name: str, cell) -> None:
    """nbgrader acts on its markers wherever they appear: they may only be the build's own lines,
    solution marks in answer cells and hidden-test marks in test cells."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    allowed = {"SOLUTION": meta.get("solution", False),
               "HIDDEN TESTS": meta.get("grade", False) and not meta.get("solution", False)}
    for line in _src(cell).split("\n"):
        for mark in _NBGRADER_MARKS:
            if mark not in line:
                continue
            kind = mark.split(" ", 1)[1]
            if line.strip() != f"### {mark}" or not allowed.get(kind, False):
                raise ValueError(f"{name}: nbgrader would act on {mark!r} in this cell:\n{_src(cell)[:300]}")


def _answer_id(question: _Question) -> str:
    n = question["answers"]
    return f"{question['name']}-answer" + (f"_{n}" if n > 1 else "")


def _new(cell, source: str, metadata: dict):
    import nbformat

    tags = [t for t in _tags(cell) if t not in ("setup", "given-earlier", "points", "otter_ignore")]
    if tags:
        metadata = {**metadata, "tags": tags}
    if cell.cell_type == "markdown":
        return nbformat.v4.new_markdown_cell(source, metadata=metadata)
    return nbformat.v4.new_code_cell(source, metadata=metadata)


