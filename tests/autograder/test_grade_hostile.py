"""``course grade`` against a class of real hostile notebooks, graded in ONE batch through the real
command (``python -m autograder``), shared by the tests below; then determinism across --workers."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import hostile
import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT = hostile.FIXTURE
pytestmark = pytest.mark.e2e


def run_grade(subs: list[Path], out: Path, *extra: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "autograder", *map(str, subs), "--assignment", str(ASSIGNMENT),
           "--out", str(out), "--no-progress", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)


def read_rows(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["file"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="session")
def batch(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hostile")
    os.chmod(root, 0o755)
    subs = root / "class"
    out = root / "out"
    secrets = [str(ASSIGNMENT / "tests" / "q1.py"), str(ASSIGNMENT / "tests"), str(out), str(subs),
               str(subs / "good.ipynb"), str(REPO / ".git"), str(REPO / "dev"), str(REPO / "solutions")]
    expected = hostile.write_class(subs, secrets)
    result = run_grade([subs, *hostile.bulk_downloads(subs)], out, "--workers", "2", "--timeout", "40",
                       "--cell-timeout", "4", "--memory", "2")
    return {"result": result, "out": out, "rows": read_rows(out) if (out / "grades.csv").exists() else {},
            "expected": expected, "subs": subs}


def test_batch_finishes_with_exit_code_zero(batch):
    r = batch["result"]
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def test_every_submission_has_exactly_one_row(batch):
    assert sorted(batch["rows"]) == sorted(batch["expected"])


def test_rows_are_sorted_and_columns_follow_otter(batch):
    text = (batch["out"] / "grades.csv").read_text(encoding="utf-8")
    header, *lines = text.splitlines()
    assert header == ("file,q1,q2,q3,q4,total_points_earned,percent_correct,grading_status,"
                      "id,manual_points_earned,final_points_earned")
    files = [r["file"] for r in csv.DictReader(text.splitlines())]
    assert files == sorted(files)
    assert all(r["q4"] == "" for r in batch["rows"].values())  # q4 is graded by hand


def _check_row(batch: dict, name: str) -> None:
    exp = batch["expected"][name]
    row = batch["rows"][name]
    status = row["grading_status"]
    if "status" in exp:
        assert status == exp["status"], f"{name}: {status}"
    else:
        assert status.startswith(exp["status_start"]), f"{name}: {status}"
    assert float(row["total_points_earned"]) == exp["total"], f"{name}: {row}"
    for q in ("q1", "q2", "q3"):
        if q in exp:
            assert float(row[q]) == exp[q], f"{name}: {row}"


@pytest.mark.parametrize("name", sorted(hostile.NAMES))
def test_row_has_the_expected_status_and_points(batch, name):
    _check_row(batch, name)


def test_good_submissions_grade_as_they_would_alone(batch, tmp_path):
    out = tmp_path / "alone"
    r = run_grade([hostile.SOLUTION], out, "--workers", "1")
    assert r.returncode == 0, r.stderr[-2000:]
    alone = read_rows(out)["00_toy-solution.ipynb"]
    for name in ("good.ipynb", "Zoë Ångström ünïcode.ipynb", "colab.ipynb", "snoop.ipynb",
                 "escape.ipynb", "print_flood.ipynb", "big_image.ipynb"):
        row = batch["rows"][name]
        assert [row[k] for k in ("q1", "q2", "q3", "total_points_earned")] == \
               [alone[k] for k in ("q1", "q2", "q3", "total_points_earned")], name
        if name not in ("snoop.ipynb", "escape.ipynb"):          # those two are flagged suspicious
            assert row["grading_status"] == alone["grading_status"], name


def test_student_code_could_not_read_or_write_secrets(batch):
    res = json.loads((batch["out"] / "results" / "snoop.json").read_text(encoding="utf-8"))
    assert "SNOOPED []" in res["output"], res["output"][:2000]
    assert "hacked" not in (batch["out"] / "grades.csv").read_text(encoding="utf-8")


def test_no_process_outlives_its_grading(batch):
    res = json.loads((batch["out"] / "results" / "escape.json").read_text(encoding="utf-8"))
    forked = int(res["output"].split("forked")[1].split()[0])
    assert forked < 400, "the process limit did not apply"
    left = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            cmdline = " ".join(p.info["cmdline"] or [])
            if hostile.MARKER in cmdline or hostile.SLEEP in cmdline:
                left.append(p.pid)
        except psutil.Error:
            pass
    assert left == []


def test_output_is_cut_to_a_sane_size(batch):
    res = json.loads((batch["out"] / "results" / "print_flood.json").read_text(encoding="utf-8"))
    assert len(res["output"]) < 70_000
    assert "output cut" in res["output"]


def test_results_json_lists_every_test_case(batch):
    res = json.loads((batch["out"] / "results" / "buggy softmax.json").read_text(encoding="utf-8"))
    cases = {(t["question"], t["name"]): t for t in res["tests"]}
    assert set(cases) == {("q1", "test_shape"), ("q1", "test_matches"), ("q2", "test_defined"),
                          ("q2", "test_small"), ("q3", "test_count")}
    hidden = cases[("q1", "test_matches")]
    assert hidden["hidden"] and not hidden["passed"] and hidden["points"] == 0 and hidden["max_points"] == 1
    assert hidden["message"] == "Your softmax does not match torch.softmax: is it over the last index?"
    assert cases[("q1", "test_shape")]["passed"]


def test_feedback_shows_public_output_and_never_hidden_code(batch):
    fb_dir = batch["out"] / "feedback"
    blank = (fb_dir / "blank.md").read_text(encoding="utf-8")
    assert "assert Softmax(torch.zeros(3, 4)).shape == (3, 4)" in blank  # public test output in full
    assert "Hint: Your softmax does not match torch.softmax" in blank
    for md in fb_dir.glob("*.md"):
        text = md.read_text(encoding="utf-8")
        assert "torch.randn(5, 7)" not in text and "FitLine(200)" not in text, md.name


def test_result_files_use_safe_unique_stems(batch):
    stems = sorted(p.stem for p in (batch["out"] / "results").glob("*.json"))
    assert len(stems) == len(batch["expected"])
    assert "Renée Dupont_1234_assignsubmission_file___00_toy" in stems
    assert sorted(p.stem for p in (batch["out"] / "feedback").glob("*.md")) == stems


def test_report_html_has_its_sections(batch):
    html = (batch["out"] / "report.html").read_text(encoding="utf-8")
    for part in ("Score histogram", "Pass rate of every test", "Time per submission",
                 "did not grade ok", "stubborn_loop.ipynb", "test_matches", "Sandbox mode"):
        assert part in html, part


def test_grades_are_byte_identical_whatever_the_workers(tmp_path):
    subs = tmp_path / "class"
    subs.mkdir()
    sol = hostile.SOLUTION.read_bytes()
    for name, data in {"a.ipynb": sol, "b blank.ipynb": hostile.BLANK.read_bytes(),
                       "c.ipynb": hostile.replace_answer("CountA", "def CountA(words):\n    return 3\n"),
                       "d.ipynb": b"{", "é.ipynb": hostile.with_cells(["import sys\nsys.exit(1)"]),
                       "f.ipynb": hostile.with_cells(["import torch\ntorch.allclose = lambda *a, **k: True"])
                       }.items():
        (subs / name).write_bytes(data)
    outs = []
    for workers in ("1", "3"):
        out = tmp_path / f"out{workers}"
        r = run_grade([subs], out, "--workers", workers)
        assert r.returncode == 0, r.stderr[-2000:]
        outs.append((out / "grades.csv").read_bytes())
    assert outs[0] == outs[1]
    assert b"c.ipynb,2.0,2.0,0.0,,4.0,0.8,ok" in outs[0]


def test_weak_mode_grades_the_same_and_says_it_is_weaker(tmp_path):
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "good.ipynb").write_bytes(hostile.SOLUTION.read_bytes())
    (subs / "tamper.ipynb").write_bytes(
        hostile.with_cells(["import torch\ntorch.allclose = lambda *a, **k: True"], base=hostile.BLANK))
    out = tmp_path / "out"
    r = run_grade([subs], out, "--sandbox", "weak", "--workers", "2")
    assert r.returncode == 0, r.stderr[-2000:]
    rows = read_rows(out)
    assert (rows["good.ipynb"]["total_points_earned"], rows["good.ipynb"]["grading_status"]) == ("5.0", "ok")
    assert rows["tamper.ipynb"]["grading_status"].startswith("tampering detected: torch.allclose")
    assert "WEAKER MODE" in (out / "report.html").read_text(encoding="utf-8")
    assert "WEAKER MODE" in r.stderr


def test_batch_finishes_when_the_runner_dies(tmp_path):
    subs = tmp_path / "class"
    subs.mkdir()
    slow = hostile.with_cells(["import time\ntime.sleep(4)"])
    for k in range(3):
        (subs / f"s{k}.ipynb").write_bytes(slow)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "autograder", str(subs), "--assignment", str(ASSIGNMENT), "--out", str(out),
           "--no-progress", "--workers", "1"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = False
    deadline = time.monotonic() + 300
    while not killed and proc.poll() is None and time.monotonic() < deadline:
        try:
            for child in psutil.Process(proc.pid).children():
                running = [c for c in child.children() if c.status() != psutil.STATUS_ZOMBIE]
                if "--zygote" in child.cmdline() and running:  # it is running a submission
                    child.kill()
                    killed = True
        except psutil.Error:  # a process ended while we looked
            pass
        time.sleep(0.2)
    stdout, stderr = proc.communicate(timeout=600)
    assert killed and proc.returncode == 0, stderr[-2000:]
    statuses = sorted(r["grading_status"] for r in read_rows(out).values())
    assert len(statuses) == 3
    # the submission running when the runner died says so (unless it had just finished); the rest grade
    assert set(statuses) <= {"ok", "grading error: the runner stopped; grade this one again"}, statuses
    assert statuses.count("ok") >= 2, statuses
