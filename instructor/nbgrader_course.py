"""nbgrader: the course as an nbgrader course directory, built from the same masters.

    nbgrader/nbgrader_config.py           the course's nbgrader settings (run nbgrader from nbgrader/)
    nbgrader/nbgrader_plugins.py          a copy of instructor/nbgrader_plugins.py, which the config imports
    nbgrader/source/NN_name/NN_name.ipynb the master as an nbgrader source notebook
    nbgrader/source/NN_name/course/       the student package, released to students with the notebook
                                          (as `course release --upto NN_name` ships it)

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
  autograde with `nbgrader_plugins.SkipUngraded`, which does not run them, as `course grade`.
- the setup cell is the nbgrader one below (no Otter, no Colab): under `nbgrader validate` and
  `autograde` it seeds the random numbers and turns quick mode on, as `course grade` does.

Per-question points: every grade_id starts with its question (`q3-test_hot_and_cold`), and
`nbgrader export` (with the config's `QuestionCsvExport`) adds them up per question, which is what
`course grade` reports per question.

`course build` calls :func:`build_nbgrader`; `python -m instructor.nbgrader_course [--check] [NN_name...]`
does the same on its own.
"""
from __future__ import annotations

import ast
import re
import shutil
import sys
from pathlib import Path

from autograder import shipped

from .masters import NAMES

ROOT = Path(__file__).resolve().parent.parent
NBGRADER = ROOT / "nbgrader"
SOURCE = NBGRADER / "source"
COURSE_ID = "transformer-from-scratch"

# ----------------------------------------------------------------------------------------------
# At build time: master -> nbgrader source notebook.

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

_RAW_MARK = re.compile(r"\s*#\s*(BEGIN|END)\s+(QUESTION|SOLUTION|TESTS|PROMPT)\b", re.IGNORECASE)
_TEST_CONFIG = re.compile(r'^\s*"""\s*#\s*BEGIN\s+TEST\s+CONFIG\s*\n(.*?)'
                          r'^\s*"""\s*#\s*END\s+TEST\s+CONFIG[^\n]*\n?',
                          re.IGNORECASE | re.MULTILINE | re.DOTALL)
_BEGIN_SOLUTION = re.compile(r"^(\s*)#\s*BEGIN\s+SOLUTION(\s+NO\s+PROMPT)?\s*$", re.IGNORECASE)
_END_SOLUTION = re.compile(r"^\s*#\s*END\s+SOLUTION\s*$", re.IGNORECASE)
_PROMPT_MARK = re.compile(r"^\s*#\s*(BEGIN|END)\s+PROMPT\s*$", re.IGNORECASE)
_SOLUTION_LINE = re.compile(r"\s*#\s*SOLUTION\s*$", re.IGNORECASE)
_SOLUTION_LINE_NO_PROMPT = re.compile(r"\s*#\s*SOLUTION\s+NO\s+PROMPT\s*$", re.IGNORECASE)
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
        this_lead = re.match(r"\s*", line).group(0)
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
    call = ast.get_source_segment(body, last.value)
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


def source_notebook(name: str, master=None):
    """The nbgrader source notebook of one master, and {grade_id: answer} (the master's answers as a
    student would write them: the filled-in notebook Otter grades, cell by cell)."""
    import nbformat
    import yaml

    from autograder.assignment import resolve_points

    from .masters import answer_code, read_master

    master = master or read_master(name)
    cells: list = []
    answers: dict[str, str] = {}
    question: dict | None = None       # {"name", "points", "manual", "all_or_nothing", ...}
    block: str | None = None           # "solution" / "tests" / "prompt"
    n_locked = 0

    def locked(cell, kind: str) -> None:
        nonlocal n_locked
        n_locked += 1
        gid = f"{kind}_{n_locked:02d}" + ("-skipped" if "otter_ignore" in _tags(cell) else "")
        cells.append(_new(cell, _src(cell), _meta(gid, locked=True)))

    def end_question() -> None:
        q = question
        cases = q["cases"]
        if q["manual"]:
            targets = q["markdown"] or q["code"]
            if not targets:
                raise ValueError(f"{name} {q['name']}: a manual question without an answer cell")
            if len(q["markdown"]) > 1:
                raise ValueError(f"{name} {q['name']}: more than one markdown answer")
            idx, _gid = targets[-1]
            cells[idx].metadata["nbgrader"].update(grade=True, points=q["points_total"])
            return
        if q["markdown"]:
            raise ValueError(f"{name} {q['name']}: a markdown answer in a question checked automatically")
        if not cases:
            return
        points = resolve_points(q["points"], [c[0].get("points") for c in cases])
        if q["all_or_nothing"]:
            blocks = [_test_block(q["name"], *case) for case in cases]
            header = f"# test {q['name']}: all of these checks or none ({_fmt_points(sum(points))})"
            text = header + "\n" + "\n\n".join(blocks)
            cells.append(nbformat.v4.new_code_cell(
                text, metadata=_meta(f"{q['name']}-tests", grade=True, locked=True, points=sum(points))))
            return
        for (config, head, fname, call), p in zip(cases, points, strict=True):
            hidden = bool(config.get("hidden", False))
            header = (f"# test {q['name']} {fname} ({_fmt_points(p)})"
                      + (": hidden, run when your notebook is graded" if hidden else ""))
            text = header + "\n" + _test_block(q["name"], config, head, fname, call)
            cells.append(nbformat.v4.new_code_cell(
                text, metadata=_meta(f"{q['name']}-{fname}", grade=True, locked=True, points=p)))

    for cell in master.cells:
        text = _src(cell)
        if cell.cell_type == "raw":
            first = text.strip().split("\n", 1)[0]
            if re.match(r"#\s*ASSIGNMENT\s+CONFIG", first, re.IGNORECASE):
                continue
            m = _RAW_MARK.match(first)
            if not m:
                continue
            what, kind = m.group(1).upper(), m.group(2).upper()
            if kind == "QUESTION" and what == "BEGIN":
                config = yaml.safe_load(text.split("\n", 1)[1]) or {}
                pts = config.get("points")
                question = {"name": str(config["name"]), "points": pts,
                            "points_total": float(sum(pts) if isinstance(pts, list) else (pts or 0)),
                            "manual": bool(config.get("manual", False)),
                            "all_or_nothing": bool(config.get("all_or_nothing", False)),
                            "cases": [], "markdown": [], "code": [], "answers": 0}
            elif kind == "QUESTION":
                end_question()
                question = None
            elif kind == "PROMPT":
                raise ValueError(f"{name}: prompt blocks in raw cells are not supported; "
                                 "use # BEGIN PROMPT lines inside the answer cell")
            elif what == "BEGIN":
                block = kind.lower()
            else:
                block = None
            continue

        if question is not None and block == "tests":
            question["cases"].append(parse_test_cell(text))
            continue

        if "colab" in _tags(cell):                # the Otter notebook's Colab badge: not on a hub
            continue
        if "setup" in _tags(cell):
            n_locked += 1
            cells.append(_new(cell, SETUP.format(name=name), _meta(f"given_{n_locked:02d}", locked=True)))
            continue

        in_answer = question is not None and block == "solution"
        if in_answer and cell.cell_type == "markdown":
            question["answers"] += 1
            gid = _answer_id(question)
            question["markdown"].append((len(cells), gid))
            cells.append(_new(cell, text, _meta(gid, grade=True, solution=True, points=0.0)))
            answers[gid] = text
            continue
        if in_answer and cell.cell_type == "code" and _has_answer(text):
            question["answers"] += 1
            gid = _answer_id(question) + ("-skipped" if "otter_ignore" in _tags(cell) else "")
            question["code"].append((len(cells), gid))
            cells.append(_new(cell, answer_source(text), _meta(gid, solution=True)))
            answers[gid] = answer_code(text)
            continue
        if in_answer and cell.cell_type == "code" and "otter_ignore" not in _tags(cell):
            cells.append(_new(cell, text, {}))                  # scaffolding the student may change
            continue
        locked(cell, "text" if cell.cell_type == "markdown" else "given")

    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{name[:2]}-nbg-{i:03d}"
        _check_marks(name, cell)
    return nb, answers


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


def _answer_id(question: dict) -> str:
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


# ----------------------------------------------------------------------------------------------
# At build time: the course directory.

CONFIG = '''\
"""nbgrader settings of the course "Transformer from Scratch" (written by `course build`).

Run nbgrader from this folder (the course directory): source/NN_name/ holds each notebook and the
course package released with it. See docs/platforms.md, "JupyterHub and nbgrader".
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, DeduplicateIds, GetGrades, IgnorePattern,
    LimitOutput, OverwriteKernelspec, SaveAutoGrades,
)
from nbgrader_plugins import (  # noqa: E402
    KeepSkippedOutputs, KeepStudentOutputs, OverwriteReleasedCells, QuestionCsvExport, RunNothing,
    SkipUngraded,
)

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "{course_id}"

# Answers: the student sees the prompt of each answer cell; the solution region leaves nothing behind.
c.ClearSolutions.code_stub = {{"python": ""}}
c.ClearSolutions.text_stub = "{text_stub}"

# Autograde runs none of the student's code (RunNothing): in nbgrader's kernel it would run
# unsandboxed, in your account, in this folder. The scores of record come from `course nbgrader
# NN_name` (the course's engine, each notebook sandboxed), which runs this autograde first, for
# nbgrader's records, and then writes the judge's points into the gradebook. Locked cells are
# compared with the text students got (hidden tests removed): only an edited one is reported.
# COURSE_NBGRADER_KERNEL=1 runs the tests in the student's kernel as stock nbgrader does (the
# cells marked -skipped, long training, are not run; at most {timeout} s per cell): only for
# comparing with nbgrader's own autograde, never for grades.
c.Execute.timeout = {timeout}
IN_KERNEL = os.environ.get("COURSE_NBGRADER_KERNEL") == "1"
EXECUTE, OUTPUTS = (SkipUngraded, KeepSkippedOutputs) if IN_KERNEL else (RunNothing, KeepStudentOutputs)
c.Autograde.sanitize_preprocessors = [
    OUTPUTS, DeduplicateIds, OverwriteKernelspec, OverwriteReleasedCells, CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    EXECUTE, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata,
]

# Feedback shows a hidden test only as its result and hint (autograde put its code back in the notebook).
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]

# `nbgrader export`: nbgrader's columns, then the points of each question (q1, q2, ...).
c.ExportApp.plugin_class = QuestionCsvExport
'''

GITIGNORE = """\
# copies of the course package, written by `course build` next to each notebook (not committed:
# they are course/ itself)
source/*/course/
# what nbgrader writes when it runs in this folder
gradebook.db
release/
submitted/
autograded/
feedback/
exchange/
*.log
"""


def course_files(names: list[str]) -> dict[str, bytes]:
    """{path under nbgrader/: bytes} of the whole course directory for the given masters."""
    import nbformat

    files: dict[str, bytes] = {
        "nbgrader_config.py": CONFIG.format(course_id=COURSE_ID, text_stub=TEXT_STUB, timeout=120).encode(),
        "nbgrader_plugins.py": (ROOT / "instructor" / "nbgrader_plugins.py").read_bytes(),
        ".gitignore": GITIGNORE.encode(),
    }
    for name in names:
        nb, _ = source_notebook(name)
        files[f"source/{name}/{name}.ipynb"] = (nbformat.writes(nb) + "\n").encode()
        for path in shipped.package_files(name):                          # as a release up to it
            files[f"source/{name}/course/{path.relative_to(ROOT / 'course').as_posix()}"] = path.read_bytes()
    return files


def build_nbgrader(names: list[str] | None = None, out: Path = NBGRADER) -> list[str]:
    """Write nbgrader/ from the masters (default: all that exist); returns the paths that changed,
    relative to the repository (or to `out`'s parent). Files of a built notebook that the build no
    longer makes are removed; notebooks not named are left alone."""
    from .masters import masters

    names = names or masters()
    files = course_files(names)
    changed: list[str] = []
    base = out.parent

    def committed(rel: str) -> bool:          # the copies of course/ are written, not committed
        return not (rel.startswith("source/") and rel.split("/")[2:3] == ["course"])

    for rel, data in sorted(files.items()):
        path = out / rel
        if not path.exists() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if committed(rel):
                changed.append(str(path.relative_to(base)))
    for name in names:
        folder = out / "source" / name
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(out).as_posix()
            if path.is_file() and rel not in files and "__pycache__" not in path.parts:
                path.unlink()
                if committed(rel):
                    changed.append(str(path.relative_to(base)))
    for folder in sorted((out / "source").glob("*")) if (out / "source").exists() else []:
        if folder.is_dir() and folder.name not in masters():
            shutil.rmtree(folder)
            changed.append(str(folder.relative_to(base)))
    return changed


# ----------------------------------------------------------------------------------------------
# For tests and benchmarks: submissions in nbgrader's form.

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


def nbgrader_env(root: Path, extra: dict | None = None) -> dict:
    """The environment nbgrader's commands run in: this Python's bin on PATH (nbgrader runs the
    `alembic` command when it makes a gradebook), and the stories read from the local copy when
    there is one (kernels inherit it)."""
    import os

    from course.data import CACHE_NAME, cache_dir

    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    stories = cache_dir() / CACHE_NAME
    if stories.exists() and "COURSE_STORIES_FILE" not in env:
        env["COURSE_STORIES_FILE"] = str(stories)
    env.setdefault("COURSE_DATA_CACHE", str(root / ".cache"))
    env.setdefault("OMP_NUM_THREADS", "1")
    env.update(extra or {})
    return env


def nbgrader(root: Path, *args: str, timeout: float = 1800, env: dict | None = None):
    """Run one nbgrader command in the course directory `root`; the CompletedProcess."""
    import subprocess

    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root, env=env or nbgrader_env(root),
                          capture_output=True, text=True, timeout=timeout)


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


def main(argv: list[str] | None = None) -> int:
    import argparse

    from .masters import masters

    parser = argparse.ArgumentParser(prog="python -m instructor.nbgrader_course",
                                     description="Write nbgrader/ (nbgrader's course directory).")
    parser.add_argument("notebooks", nargs="*", help="NN_name of the masters (default: all)")
    parser.add_argument("--check", action="store_true", help="fail if nbgrader/ was out of date")
    args = parser.parse_args(argv)
    unknown = [n for n in args.notebooks if n not in NAMES]
    if unknown:
        parser.error(f"unknown notebook(s) {unknown}; choose from {NAMES}")
    changed = build_nbgrader(args.notebooks or None)
    for path in changed:
        print(f"updated {path}")
    print(f"nbgrader: {len(args.notebooks or masters())} notebook(s); {len(changed)} file(s) changed")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
