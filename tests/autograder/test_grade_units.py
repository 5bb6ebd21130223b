"""Fast tests of the grader's pieces (no notebook is executed here)."""
from __future__ import annotations

import json
from pathlib import Path

import hostile
import pytest
import torch

from autograder import assignment, inputs, notebook, report, results, runner
from autograder.snapshot import Snapshot

# ---------------------------------------------------------------- inputs

def test_folder_is_searched_recursively_and_named_by_relative_path(tmp_path):
    (tmp_path / "sec 1").mkdir()
    (tmp_path / "sec 1" / "Zoë.ipynb").write_bytes(b"{}")
    (tmp_path / "b.ipynb").write_bytes(b"x")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "b-checkpoint.ipynb").write_bytes(b"x")
    (tmp_path / "notes.txt").write_text("not a notebook")
    subs = inputs.collect([str(tmp_path)])
    assert [s.file for s in subs] == ["b.ipynb", "sec 1/Zoë.ipynb"]
    assert [s.stem for s in subs] == ["b", "sec 1__Zoë"]


def test_lms_zip_keeps_student_names_and_skips_mac_junk(tmp_path):
    z = tmp_path / "bulk.zip"
    z.write_bytes(hostile.zip_of({"Renée_1_assignsubmission_file_/hw.ipynb": b"1",
                                  "Bob_2_assignsubmission_file_/hw.ipynb": b"2",
                                  "__MACOSX/Bob/._hw.ipynb": b"junk"}, utf8_names=False))
    subs = inputs.collect([str(z)])
    assert [(s.file, s.data) for s in subs] == [("Bob_2_assignsubmission_file_/hw.ipynb", b"2"),
                                                ("Renée_1_assignsubmission_file_/hw.ipynb", b"1")]


def test_zip_with_one_notebook_is_named_after_the_zip(tmp_path):
    z = tmp_path / "alice smith.zip"
    z.write_bytes(hostile.zip_of({"folder/hw.ipynb": b"{}"}))
    (sub,) = inputs.collect([str(z)])
    assert (sub.file, sub.data, sub.notebook_name) == ("alice smith.zip", b"{}", "hw.ipynb")


def test_broken_zip_and_missing_path(tmp_path):
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    (sub,) = inputs.collect([str(tmp_path / "bad.zip")])
    assert sub.data is None and sub.problem.startswith("unreadable zip")
    with pytest.raises(inputs.InputError):
        inputs.collect([str(tmp_path / "nope")])


def test_duplicate_names_are_a_clash_on_both_rows_with_unique_stems(tmp_path):
    for d in ("x", "y"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "hw.ipynb").write_bytes(b"{}")
    subs = inputs.collect([str(tmp_path / "x" / "hw.ipynb"), str(tmp_path / "y" / "hw.ipynb")])
    assert [s.file for s in subs] == ["hw.ipynb (name clash 1 of 2)", "hw.ipynb (name clash 2 of 2)"]
    assert all(s.problem.startswith("name clash: 2 submissions are named 'hw.ipynb'") for s in subs)
    assert len({s.stem for s in subs}) == 2


# ---------------------------------------------------------------- reading notebooks

@pytest.mark.parametrize("data, reason", [
    (b"", "unreadable notebook: empty file"),
    (b"   \n", "unreadable notebook: empty file"),
    (b"{nope", "unreadable notebook: not valid JSON"),
    (b"\xff\xfe\x00", "unreadable notebook: not valid JSON (not UTF-8 text)"),
    (b"{}", "unreadable notebook: not a notebook (no cells)"),
    (b"[1, 2]", "unreadable notebook: not a notebook (JSON is not an object)"),
    (hostile.nbformat3(), "unreadable notebook: nbformat 3 is too old (needs 4)"),
    (b'{"nbformat": 4, "cells": [7]}', "unreadable notebook: cell 1 is not a cell"),
])
def test_bad_notebooks_have_clear_reasons(data, reason):
    assert notebook.read_notebook(data) == (None, reason)


def test_colab_notebook_reads_and_otter_ignore_is_honoured():
    cells, problem = notebook.read_notebook(hostile.colab(hostile.SOLUTION.read_bytes()))
    assert problem is None
    ignored = [c for c in cells if c["ignore"]]
    assert len(ignored) == 1 and "time.sleep(1000)" in ignored[0]["source"]


def test_capped_writer_keeps_the_start_and_counts_the_rest():
    w = runner.CappedWriter(10)
    w.write("0123456789abc")
    w.write("def")
    assert w.text().startswith("0123456789\n[... output cut: 6 more characters]")


# ---------------------------------------------------------------- tamper detection

def test_snapshot_sees_replaced_patched_and_restored_functions():
    import course.two_sentences as ts
    snap = Snapshot.take()
    assert snap.compare() == []
    orig = torch.allclose
    try:
        torch.allclose = lambda *a, **k: True
        assert snap.compare() == ["torch.allclose was replaced"]
    finally:
        torch.allclose = orig
    try:
        torch.Tensor.__bool__ = lambda self: True
        assert "torch.Tensor.__bool__ was overridden" in snap.compare()
    finally:
        del torch.Tensor.__bool__
    code = ts.Encode.__code__
    try:
        ts.Encode.__code__ = (lambda s: []).__code__
        assert "the code of course.two_sentences.Encode was changed" in snap.compare()
    finally:
        ts.Encode.__code__ = code
    assert snap.compare() == []


def test_new_module_attributes_are_not_tampering():
    snap = Snapshot.take()
    torch.my_helper_for_test = 3
    try:
        assert snap.compare() == []
    finally:
        del torch.my_helper_for_test


# ---------------------------------------------------------------- assignment and reports

def test_toy_assignment_loads_with_points_and_hidden_flags():
    asg = assignment.load(str(hostile.FIXTURE))
    assert [q.name for q in asg.questions] == ["q1", "q2", "q3", "q4"]
    assert [q.name for q in asg.auto] == ["q1", "q2", "q3"] and asg.max_points == 5.0
    q1 = asg.questions[0]
    assert [(c.name, c.points, c.hidden) for c in q1.cases] == [("test_shape", 1.0, False),
                                                                  ("test_matches", 1.0, True)]
    assert asg.checks == ["q1", "q2", "q3"]
    assert "from otter" not in asg.tests_payload()[0]["source"]


@pytest.mark.parametrize("path", sorted(assignment.ASSIGNMENTS.glob("*/tests/q*.py"))
                         + sorted((hostile.FIXTURE / "tests").glob("q*.py")), ids=lambda p: str(p)[-30:])
def test_test_files_are_read_as_otter_reads_them(path):
    from otter.test_files.exception_test import ExceptionTestFile
    otter_file = ExceptionTestFile.from_file(str(path))
    cases, all_or_nothing = assignment.read_test_file(path.stem, path.read_text(), path)
    assert [(c.points, c.hidden, c.failure_message, c.success_message) for c in cases] == \
        [(tc.points, tc.hidden, tc.failure_message, tc.success_message) for tc in otter_file.test_cases]
    assert [c.name for c in cases] == [tc.body.test_func.__name__ for tc in otter_file.test_cases]
    assert all_or_nothing == otter_file.all_or_nothing


def test_otter_point_rules():
    assert assignment.resolve_points(4, [None, None]) == [2.0, 2.0]
    assert assignment.resolve_points(4, [1, None, None]) == [1.0, 1.5, 1.5]
    assert assignment.resolve_points(None, [None, None]) == [0.5, 0.5]
    assert assignment.resolve_points(None, [2, None]) == [2.0, 0.0]
    assert assignment.resolve_points([1, 3], [None, None]) == [1.0, 3.0]


def test_grades_csv_has_otter_columns_sorted_rows_and_empty_manual_column():
    asg = assignment.load(str(hostile.FIXTURE))
    rows = [report.Result(file="b.ipynb", stem="b", status="ok", question_points={"q1": 2, "q2": 1, "q3": 0}),
            report.Result(file="a.ipynb", stem="a", status="timeout", question_points={}, seconds=9.0)]
    text = report.grades_csv(asg, rows)
    assert text == ("file,q1,q2,q3,q4,total_points_earned,percent_correct,grading_status,"
                    "id,manual_points_earned,final_points_earned\r\n"
                    "a.ipynb,0.0,0.0,0.0,,0.0,0.0,timeout,,,\r\n"
                    "b.ipynb,2.0,1.0,0.0,,3.0,0.6,ok,,,\r\n")


def test_unknown_assignment_is_a_usage_error(tmp_path, capsys):
    from autograder.grade import main
    assert main([str(tmp_path), "--assignment", "99_nope", "--out", str(tmp_path / "o")]) == 2
    assert "no assignment" in capsys.readouterr().err


def test_result_json_round_trips(tmp_path):
    asg = assignment.load(str(hostile.FIXTURE))
    r = report.Result(file="é.ipynb", stem="é", status="ok", question_points={"q1": 1.0})
    r.cases.append(results.CaseResult("q1", "test_shape", 1.0, 1.0, False, True, "Test case passed"))
    doc = json.loads(report.result_json(asg, r))
    assert doc["tests"][0] == {"question": "q1", "name": "test_shape", "points": 1.0, "max_points": 1.0,
                               "hidden": False, "passed": True, "message": "Test case passed"}
    assert Path(tmp_path).exists()


def test_feedback_shows_the_cells_that_raised_given_ones_too():
    """A GIVEN cell that fails on an answer the tests accept is the student's business too: the
    feedback names every cell that raised, on one line each, and ignores malformed entries."""
    asg = assignment.load(str(hostile.FIXTURE))
    r = report.Result(file="a.ipynb", stem="a", status="ok", question_points={"q1": 1.0})
    r.cell_errors = [{"cell": 51, "kind": "error",
                      "error": "AttributeError: 'SelfAttention' object has no attribute 'drop'"},
                     {"cell": 7, "kind": "timeout", "error": "ran over 60 s\nand `more`"},
                     {"cell": "x", "error": "forged"}, "not a dict"]
    text = report.feedback_md(asg, r)
    assert "## Cells that stopped with an error" in text
    assert "- cell 51: `AttributeError: 'SelfAttention' object has no attribute 'drop'`" in text
    assert "- cell 7: `ran over 60 s?and 'more'`" in text
    assert "forged" not in text and "- ... and 2 more" in text
    clean = report.Result(file="b.ipynb", stem="b", status="ok", question_points={"q1": 1.0})
    assert "stopped with an error" not in report.feedback_md(asg, clean)


def test_phases_split_a_submissions_wall_time_and_need_every_mark():
    from autograder import verdict
    from autograder.job import Job

    # the judge times its tests (0.5 s); what else passed between the cells' end and its report is
    # its start (it waited for the grader's go, started beside the cells)
    job = Job(index=0, sub=None, staging=Path(), started=10.0, ready_at=10.1, cells_done_at=11.1,
              judge_done_at=11.65, judge_done={"seconds": 0.5})
    phases = verdict.phases(job, 1.75)
    assert phases == pytest.approx({"sandbox_start": 0.1, "cells": 1.0, "judge_start": 0.05, "tests": 0.5,
                                    "cleanup": 0.1})
    assert sum(phases.values()) == pytest.approx(1.75)
    job.judge_done = {"seconds": "0.5"}          # the judge's report is checked, not believed
    assert verdict.phases(job, 1.75) == {}
    job.judge_done, job.judge_done_at = {"seconds": 0.5}, None      # killed in its tests: no split
    assert verdict.phases(job, 1.75) == {}
