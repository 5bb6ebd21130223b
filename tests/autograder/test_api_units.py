"""The engine's API (autograder/config.py, autograder/api.py) and its command line, without running a
notebook: what a GradeConfig holds and refuses, argv made into one, a grading that cannot start
writing nothing, and the students' names reaching the report only through the value passed down."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import hostile
import pytest

from autograder import api, assignment, report
from autograder import grade as cli
from autograder.config import GradeConfig, GradingError, Shard
from autograder.results import Result


def config(**fields) -> GradeConfig:
    return GradeConfig(**{"submissions": (Path("subs"),), "assignment": "03_attention", "out": Path("g"),
                          **fields})


def test_a_config_is_keyword_only_and_frozen():
    with pytest.raises(TypeError):
        GradeConfig((Path("subs"),), "03_attention", Path("g"))          # positional: refused
    c = config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.workers = 8
    names = {("canvas", "7"): "Ada"}
    c = config(student_names=names)
    names[("canvas", "8")] = "Bob"                  # the caller's dict changes, the config does not
    assert dict(c.student_names) == {("canvas", "7"): "Ada"}
    with pytest.raises(TypeError):
        c.student_names[("canvas", "9")] = "Eve"


def test_the_cell_limit_defaults_to_at_most_two_minutes_and_never_over_the_whole_run():
    assert config().cell_timeout == 120.0
    assert config(timeout=45).cell_timeout == 45.0
    assert config(timeout=600, cell_timeout=30).cell_timeout == 30.0
    assert isinstance(config(timeout=60).timeout, float)


@pytest.mark.parametrize("fields, says", [
    ({"workers": 0}, "--workers must be at least 1"),
    ({"sandbox": "docker"}, "--sandbox must be one of"),
    ({"submissions": ()}, "no submissions given"),
    ({"timeout": 0}, "must be more than 0"),
    ({"cell_timeout": -1}, "--cell-timeout must be more than 0"),
])
def test_a_bad_value_is_refused_with_its_reason(fields, says):
    with pytest.raises(GradingError, match=says) as caught:
        config(**fields)
    assert caught.value.exit_code == 2


def test_a_shard_is_k_of_n_counted_from_zero():
    assert str(Shard(0, 3)) == "0/3"
    with pytest.raises(GradingError, match="K must be from 0 to N-1"):
        Shard(3, 3)


def test_the_command_line_makes_the_same_config(tmp_path):
    p = cli.parser()
    args = p.parse_args([str(tmp_path / "a.ipynb"), str(tmp_path / "b"), "--assignment", "04_head",
                         "--out", str(tmp_path / "out"), "--workers", "3", "--timeout", "90",
                         "--memory", "2", "--sandbox", "weak", "--no-progress", "--no-similarity",
                         "--shard", "1/4", "--cache"])
    assert cli.config_from(args, p) == GradeConfig(
        submissions=(tmp_path / "a.ipynb", tmp_path / "b"), assignment="04_head", out=tmp_path / "out",
        workers=3, timeout=90, cell_timeout=90, memory=2, sandbox="weak", progress=False,
        similarity=False, shard=Shard(1, 4), cache=True)


@pytest.mark.parametrize("argv, says", [(["--shard", "4/4"], "K must be from 0 to N-1"),
                                        (["--shard", "one/two"], "wants K/N"),
                                        (["--workers", "0"], "at least 1")])
def test_the_command_line_refuses_a_bad_value_as_a_usage_error(argv, says, capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(["x.ipynb", "--assignment", "04_head", "--out", "o", *argv])
    assert caught.value.code == 2 and says in capsys.readouterr().err


def test_a_grading_that_cannot_start_raises_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(GradingError, match="99_nope"):
        api.grade(config(assignment="99_nope", out=out))
    with pytest.raises(GradingError, match="no such file or folder"):
        api.grade(config(submissions=(tmp_path / "nope.ipynb",), assignment=str(hostile.FIXTURE), out=out))
    (tmp_path / "empty").mkdir()
    with pytest.raises(GradingError, match="no notebooks found"):
        api.grade(config(submissions=(tmp_path / "empty",), assignment=str(hostile.FIXTURE), out=out))
    assert not out.exists()


def test_student_names_reach_the_report_only_when_passed(tmp_path):
    asg = assignment.load(str(hostile.FIXTURE))
    row = Result(file="smithjohn_12345_67890_hw.ipynb", stem="smithjohn_12345_67890_hw", status="ok")
    meta = {"workers": 1, "mode": "weak"}
    named = report.report_html(asg, [row], dict(meta), {("canvas", "12345"): "John Smith"})
    assert "<b>John Smith</b>" in named
    assert "John Smith" not in report.report_html(asg, [row], dict(meta))     # nothing left behind


def test_the_graders_own_process_does_not_import_torch():
    """The batch's parent process holds only plain data; torch (about 200 MB) lives in the runners'
    and judges' fork servers. A module that imports the student package at its top (course/__init__
    imports torch) made the grader's peak memory 232 MB with the zip bombs' batch (limit 200)."""
    import subprocess
    import sys
    code = ("import sys, autograder.api, autograder.grade, autograder.shard_merge, autograder.report\n"
            "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_api_prints_nothing_and_returns_its_notes(tmp_path, capsys):
    """What a grading has to say comes back in the Outcome (the command lines print it: api.say);
    the engine itself writes nothing on stdout or stderr. Merged shards, so that no notebook runs."""
    from autograder import shard_merge
    asg = assignment.load(str(hostile.FIXTURE))
    row = Result(file="a.ipynb", stem="a", status="ok")
    meta = {"workers": 1, "mode": "weak", "warnings": [], "skipped": [],
            "shards": [{"shard": 0, "rows": 1, "mode": "weak"}]}
    merged = shard_merge.Merged(asg=asg, results=[row], meta=meta, shard_dirs=[], n=1,
                                notes=["shard 1 of 2 was graded by another run"])
    out = tmp_path / "out"
    outcome = api.write_merge(merged, out=out, similarity=False)
    assert capsys.readouterr() == ("", "")
    notes = list(outcome.notes)
    assert notes[0] == "note: shard 1 of 2 was graded by another run"
    assert notes[1] == (f"graded 1 submissions of {asg.name} in 1 shards (1 ok, 0 not ok; sandbox: weak) "
                        f"-> {out.resolve() / 'grades.csv'}")
    manual = any(q.manual for q in asg.questions)
    assert any(line.startswith("hand grading: open ") for line in notes) == manual
    assert notes[-1].startswith("merged 1 shards (shard 0: 1 rows, weak) in ")
    assert (out / "grades.csv").read_text().count("\n") == 2
    api.say(outcome)
    assert capsys.readouterr().out.splitlines() == notes
