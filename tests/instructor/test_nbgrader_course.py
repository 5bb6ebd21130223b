"""The nbgrader course directory (instructor/nbgrader/): made from the masters, in seconds.

The slow test that runs nbgrader's own commands on it is tests/instructor/test_nbgrader_grading.py.
"""
from __future__ import annotations

import io
import random
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path

import nbformat
import pytest
import torch
from traitlets.config import Config

from autograder import shipped
from autograder.assignment import load
from course.nbgrader_check import CheckFailed, check
from instructor.build import NOTEBOOKS, ROOT, masters, read_master
from instructor.nbgrader.export import NBGRADER, PLUGINS, course_files
from instructor.nbgrader.plugins import KeepSkippedOutputs, SkipUngraded, is_skipped
from instructor.nbgrader.source import answer_source, source_notebook

NAMES = masters()


def nbg(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def released(name: str) -> nbformat.NotebookNode:
    """The source notebook through nbgrader's own ClearSolutions and ClearHiddenTests, with the
    course's stubs (what `nbgrader generate_assignment` does to the cells)."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    nb, _ = source_notebook(name)
    config = Config()
    config.ClearSolutions.code_stub = {"python": ""}
    config.ClearSolutions.text_stub = "_Type your answer here, replacing this text._"
    nb, res = ClearSolutions(config=config).preprocess(nb, {})
    nb, _ = ClearHiddenTests(config=config).preprocess(nb, res)
    return nb


@pytest.mark.parametrize("name", NAMES)
def test_every_test_case_is_a_test_cell_with_its_points(name):
    nb, _ = source_notebook(name)
    tests = [(nbg(c)["grade_id"], nbg(c)["points"], "### BEGIN HIDDEN TESTS" in c.source)
             for c in nb.cells if nbg(c).get("grade") and not nbg(c).get("solution")]
    want = []
    for q in load(name).auto:
        if q.all_or_nothing:
            want.append((f"{q.name}-tests", q.max_points, any(c.hidden for c in q.cases)))
        else:
            want += [(f"{q.name}-{c.name}", c.points, c.hidden) for c in q.cases]
    assert tests == want
    for cell in nb.cells:
        if nbg(cell).get("grade") and not nbg(cell).get("solution"):
            assert nbg(cell)["locked"] and cell.cell_type == "code"


@pytest.mark.parametrize("name", NAMES)
def test_manual_questions_are_manually_graded_answers_with_their_points(name):
    nb, _ = source_notebook(name)
    for q in load(name).questions:
        graded = [c for c in nb.cells if nbg(c).get("grade") and nbg(c)["grade_id"].split("-")[0] == q.name]
        if q.manual:
            assert len(graded) == 1 and nbg(graded[0])["solution"], q.name
            assert nbg(graded[0])["points"] == q.points
        else:
            assert not any(nbg(c)["solution"] for c in graded)
            assert sum(nbg(c)["points"] for c in graded) == pytest.approx(q.max_points)


@pytest.mark.parametrize("name", NAMES)
def test_students_see_what_otter_shows_them(name):
    """The answer cells of the released notebook read as those of the Otter student notebook
    (notebooks/NN_name.ipynb), blank lines aside."""
    def lines(text):
        return [line for line in text.split("\n") if line.strip()]

    otter = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    # Otter marks every code cell of a solution block; the ones with an answer in the master are ours
    in_block, with_answer = False, []
    for cell in read_master(name).cells:
        if cell.cell_type == "raw" and "SOLUTION" in cell.source.split("\n")[0]:
            in_block = "BEGIN" in cell.source.split("\n")[0]
        elif in_block and cell.cell_type == "code":
            with_answer.append("SOLUTION" in cell.source)
    for kind in ("code", "markdown"):      # (Otter puts a markdown answer first in its question)
        ours = [c.source for c in released(name).cells if nbg(c).get("solution") and c.cell_type == kind]
        theirs = [c.source for c in otter.cells
                  if "otter_answer_cell" in c.metadata.get("tags", []) and c.cell_type == kind]
        if kind == "code":
            assert len(theirs) == len(with_answer)
            theirs = [s for s, answer in zip(theirs, with_answer, strict=True) if answer]
        assert [lines(s) for s in ours] == [lines(s) for s in theirs]


@pytest.mark.parametrize("name", NAMES)
def test_released_cells_hold_no_answer_and_no_hidden_test(name):
    nb = released(name)
    text = "\n".join(c.source for c in nb.cells)
    src, answers = source_notebook(name)
    for q in load(name).auto:
        for case in q.cases:
            if case.hidden:
                assert f"def {case.name}(" not in text
    for cell in nb.cells:
        test = nbg(cell).get("grade") and not nbg(cell).get("solution")
        if test and "hidden" in cell.source.split("\n")[0]:
            assert cell.source.strip().count("\n") == 0, cell.source       # the header line only
    assert "SOLUTION" not in text.replace("# SOLUTION", "")


@pytest.mark.parametrize("name", NAMES)
def test_given_cells_are_locked_and_training_is_skipped(name):
    master = read_master(name)
    nb, _ = source_notebook(name)
    ignored = sum("otter_ignore" in c.metadata.get("tags", []) for c in master.cells if c.cell_type == "code")
    skipped = [c for c in nb.cells if nbg(c).get("grade_id", "").endswith("-skipped")]
    assert len(skipped) == ignored
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("# GIVEN"):
            assert nbg(cell)["locked"] and not nbg(cell)["solution"], cell.source[:80]
    setup = [c for c in nb.cells if c.source.startswith("# GIVEN: setup")]
    assert len(setup) == 1 and nbg(setup[0])["locked"]
    assert "otter" not in setup[0].source and "NBGRADER_EXECUTION" in setup[0].source
    checks = re.compile(r"(?<![\w.])grader\.check\(")          # otter's; not autograder.checks
    assert not any(checks.search(c.source) for c in nb.cells if c.cell_type == "code")


def test_answer_source_keeps_the_prompt_and_marks_the_answer():
    src = "perm = torch.randperm(5)\nx = 1  # SOLUTION\ny = 2  # SOLUTION\nprint(x, y)"
    assert answer_source(src) == ("perm = torch.randperm(5)\nx = ...\ny = ...\n### BEGIN SOLUTION\n"
                                  "x = 1\ny = 2\n### END SOLUTION\nprint(x, y)")
    src = "# BEGIN PROMPT\ndef f(x):\n    ...\n# END PROMPT\n# BEGIN SOLUTION NO PROMPT\ndef f(x):\n" \
          "    return x\n# END SOLUTION"
    assert answer_source(src) == ("def f(x):\n    ...\n### BEGIN SOLUTION\ndef f(x):\n    return x\n"
                                  "### END SOLUTION")


def test_committed_course_directory_is_up_to_date():
    files = course_files(NAMES)
    stale = [rel for rel, data in files.items()
             if not (NBGRADER / rel).is_file() or (NBGRADER / rel).read_bytes() != data]
    assert not stale, ("nbgrader/ is out of date with the masters or course/: run `course build` "
                       f"(or `python -m instructor.nbgrader.export`) and commit it ({stale[:5]})")
    assert (NBGRADER / "nbgrader_plugins.py").read_bytes() == PLUGINS.read_bytes()   # written by the build


def test_the_plugins_have_one_source():
    """The course directory's copy of the plugins is written by the build, never committed."""
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "nbgrader/nbgrader_plugins.py"], cwd=ROOT,
                             capture_output=True, text=True).stdout
    assert not tracked.strip(), "nbgrader/nbgrader_plugins.py is committed (it is written by the build)"
    assert "nbgrader_plugins.py" in course_files([])[".gitignore"].decode().splitlines()


def _load_config(folder: Path):
    from traitlets.config.loader import PyFileConfigLoader

    (folder / "nbgrader_config.py").write_text(course_files([])["nbgrader_config.py"].decode())
    (folder / "nbgrader_plugins.py").write_bytes(course_files([])["nbgrader_plugins.py"])
    try:
        return PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    finally:
        sys.path[:] = [p for p in sys.path if Path(p).resolve() != folder.resolve()]
        sys.modules.pop("nbgrader_plugins", None)


def test_config_loads_and_plugs_in_the_course(tmp_path, monkeypatch):
    """Autograde runs none of the student's code (the scores come from `course nbgrader`); only the
    comparison benchmark asks for stock, in-kernel autograde."""
    monkeypatch.delenv("COURSE_NBGRADER_KERNEL", raising=False)
    config = _load_config(tmp_path)
    assert config.ClearSolutions.code_stub == {"python": ""}
    assert config.ExportApp.plugin_class.__name__ == "QuestionCsvExport"
    assert config.Autograde.autograde_preprocessors[0].__name__ == "RunNothing"
    assert config.Autograde.sanitize_preprocessors[0].__name__ == "KeepStudentOutputs"
    assert config.Execute.timeout == 120
    monkeypatch.setenv("COURSE_NBGRADER_KERNEL", "1")
    config = _load_config(tmp_path)
    assert config.Autograde.autograde_preprocessors[0].__name__ == "SkipUngraded"
    assert config.Autograde.sanitize_preprocessors[0].__name__ == "KeepSkippedOutputs"



def _lines(source: str) -> str:
    """A cell's text without its blank lines (nbgrader's answer stub and Otter's prompt differ there)."""
    return "\n".join(line for line in source.splitlines() if line.strip())


@pytest.mark.parametrize("name", NAMES)
def test_course_nbgrader_skips_exactly_the_cells_course_grade_skips(name):
    """`course nbgrader` hands the engine a submission in Otter's form; the engine leaves out (does
    not run, its rules do not read) the cells tagged `otter_ignore`. A released notebook in that
    form must skip the cells the Otter student notebook skips, no more and no fewer: the training
    runs, the plots made from them and the answers that train."""
    from autograder.notebook import read_notebook
    from instructor.nbgrader.grade import otter_form

    def skipped(nb) -> list[str]:
        cells, problem = read_notebook(nbformat.writes(nb).encode())
        assert problem is None
        return [_lines(c["source"]) for c in cells if c["ignore"]]

    student = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    assert skipped(otter_form(released(name))) == skipped(student)
    stray = released(name)                        # a tag the student added: nbgrader runs the cell
    answer = next(c for c in stray.cells if nbg(c).get("solution") and c.cell_type == "code")
    answer.metadata["tags"] = ["otter_ignore"]
    assert skipped(otter_form(stray)) == skipped(student)

def test_a_test_cell_marked_skipped_still_runs():
    def cell(**meta):
        return nbformat.v4.new_code_cell("x", metadata={"nbgrader": meta})

    assert is_skipped(cell(grade_id="q6-answer-skipped", grade=True, solution=True))
    assert is_skipped(cell(grade_id="given_07-skipped", grade=False, solution=False, locked=True))
    assert not is_skipped(cell(grade_id="q1-test_values-skipped", grade=True, solution=False))
    assert not is_skipped(cell(grade_id="q1-answer", grade=False, solution=True))


def test_skip_ungraded_does_not_run_skipped_cells_and_keeps_their_outputs():
    def cell(source, grade_id, **meta):
        meta = {"grade": False, "solution": False, "locked": True, **meta, "grade_id": grade_id}
        return nbformat.v4.new_code_cell(source, metadata={"nbgrader": meta})

    submitted = nbformat.v4.new_output("stream", name="stdout", text="the student's plot\n")
    nb = nbformat.v4.new_notebook(cells=[
        cell("x = 1", "given_01"),
        cell("x = 2\nraise RuntimeError('ran')", "given_02-skipped"),
        cell("assert x == 1\nprint('ok')", "q1-test", grade=True, points=1.0),
        cell("raise RuntimeError('a test always runs')", "q1-test_b-skipped", grade=True, points=1.0),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for c in nb.cells:
        c.outputs = [submitted]
    nb, res = KeepSkippedOutputs().preprocess(nb, {})
    assert [len(c.outputs) for c in nb.cells] == [0, 1, 0, 0]
    nb, _ = SkipUngraded(timeout=60).preprocess(nb, res)
    assert nb.cells[1].outputs == [submitted]
    assert nb.cells[2].outputs[0]["text"] == "ok\n"
    assert nb.cells[3].outputs[0]["output_type"] == "error"


# ---- check(): how a test cell runs a test case in the notebook's kernel

def test_check_passes_quietly():
    out = io.StringIO()
    with redirect_stdout(out):
        check(lambda: print("noise") or sys.stderr.write("progress bar"), "msg", name="q1 test_x")
    assert out.getvalue() == "passed: q1 test_x\n"


def test_check_failure_says_the_message_and_for_public_tests_what_went_wrong():
    def failing():
        raise AssertionError("weights differ")

    with pytest.raises(CheckFailed) as public:
        check(failing, "Is the softmax over the last index?", name="q1 test_values")
    assert "Is the softmax over the last index?" in str(public.value)
    assert "weights differ" in str(public.value)
    with pytest.raises(CheckFailed) as hidden:
        check(failing, "Is the softmax over the last index?", name="q1 test_values", hidden=True)
    assert "weights differ" not in str(hidden.value)
    shown = hidden.value._render_traceback_()
    assert not any("failing" in line or "raise" in line for line in shown)
    with pytest.raises(CheckFailed):
        check(lambda: undefined_name, "msg")  # noqa: F821
    with pytest.raises(CheckFailed):
        check(lambda: sys.exit(1), "msg")


def test_check_leaves_the_notebooks_random_numbers_alone():
    torch.manual_seed(7)
    random.seed(7)
    want = torch.rand(3), random.random()
    torch.manual_seed(7)
    random.seed(7)
    check(lambda: (torch.manual_seed(1), random.seed(1), torch.rand(5)), "msg")
    assert torch.equal(torch.rand(3), want[0]) and random.random() == want[1]


def test_source_notebooks_are_valid_nbgrader_notebooks():
    from nbgrader.nbgraderformat import MetadataValidator

    for name in NAMES:
        nb, _ = source_notebook(name)
        MetadataValidator().validate_nb(nb)
        nbformat.validate(nb)


def test_course_package_goes_with_every_notebook():
    """As a release up to that notebook ships it: the student package, never `__main__.py` (the
    instructor's command), tinydenoiser.py from 08 on."""
    for name in (NAMES[0], "07_my_transformer", "08_causal"):
        if name not in NAMES:
            continue
        files = course_files([name])
        package = sorted(p.relative_to(ROOT).as_posix() for p in shipped.package_files(name))
        copied = sorted(Path(r).relative_to(f"source/{name}").as_posix() for r in files
                        if r.startswith(f"source/{name}/course/"))
        assert copied == package and "course/__main__.py" not in copied
        assert ("course/tinydenoiser.py" in copied) == (name >= "08_causal")
