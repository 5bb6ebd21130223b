"""Attacks on the verdicts, through the real ``course grade`` command, on 03_attention.

One batch holds an honest correct notebook, an honest blank one, and one notebook per class of
attack (tests/support/forgery.py). Each attack may score no more than its honest content
deserves (a blank notebook: 0); the honest rows must come out exactly as when graded alone; the
hidden tests' code must not reach anything the student's process produced or the feedback.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import forgery
import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e


def grade(subs: list[Path], out: Path, *extra: str) -> dict[str, dict]:
    cmd = [sys.executable, "-m", "autograder", *map(str, subs), "--assignment", forgery.NAME,
           "--out", str(out), "--no-progress", "--cell-timeout", "20", "--timeout", "120", *extra]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=REPO,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["file"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> dict:
    if not forgery.SOLUTION.exists():
        subprocess.run([sys.executable, "-m", "course", "build", forgery.NAME], cwd=REPO, check=True)
    root = tmp_path_factory.mktemp("forgery")
    forgery.write_class(root / "class")
    rows = grade([root / "class"], root / "out", "--workers", "2")
    alone = {}
    for name in ("honest correct.ipynb", "honest blank.ipynb"):
        alone[name] = grade([root / "class" / name], root / f"alone-{name}")[name]
    return {"rows": rows, "alone": alone, "out": root / "out"}


def test_every_submission_has_a_row(batch):
    assert sorted(batch["rows"]) == sorted(["honest correct.ipynb", "honest blank.ipynb", *forgery.ATTACKS])


@pytest.mark.parametrize("name", ["honest correct.ipynb", "honest blank.ipynb"])
def test_honest_rows_grade_exactly_as_alone(batch, name):
    row, alone = batch["rows"][name], batch["alone"][name]
    assert row == alone
    assert row["grading_status"] == "ok"
    assert float(row["total_points_earned"]) == (forgery.points()[0] if "correct" in name else 0.0)


@pytest.mark.parametrize("name", sorted(forgery.ATTACKS))
def test_attack_earns_no_more_than_its_honest_content(batch, name):
    spec, row = forgery.ATTACKS[name], batch["rows"][name]
    total = float(row["total_points_earned"])
    value = {forgery.ALL_BUT_RULES: forgery.points()[1]}
    if "exactly" in spec:
        assert total == value.get(spec["exactly"], spec["exactly"]), row
    limit = spec.get("at_most", spec.get("exactly"))
    assert total <= value.get(limit, limit), row
    if "status_start" in spec:
        assert row["grading_status"].startswith(spec["status_start"]), row["grading_status"]
    if spec.get("rules_lost"):
        path = batch["out"] / "results" / f"{Path(name).stem}.json"
        result = json.loads(path.read_text(encoding="utf-8"))
        rules = [t for t in result["tests"] if t["name"] == "test_rules"]
        assert rules and not any(t["passed"] for t in rules), rules


def test_attacks_are_not_reported_ok(batch):
    """Every attack is either caught (tampering, suspicious code) or scores nothing."""
    for name in forgery.ATTACKS:
        row = batch["rows"][name]
        assert row["grading_status"] != "ok" or float(row["total_points_earned"]) == 0.0, (name, row)


def test_hidden_test_code_never_reaches_the_student_side(batch):
    hidden_lines = set()
    for path in (REPO / "autograder" / "assignments" / forgery.NAME / "tests").glob("*.py"):
        for line in path.read_text().splitlines():
            line = line.strip()
            if line.startswith(("assert ", "w_ref", "for L, d")) and len(line) > 25:
                hidden_lines.add(line)
    assert hidden_lines
    for name in forgery.ATTACKS:
        stem = Path(name).stem
        feedback = (batch["out"] / "feedback" / f"{stem}.md").read_text(encoding="utf-8")
        result = json.loads((batch["out"] / "results" / f"{stem}.json").read_text(encoding="utf-8"))
        from_student = json.dumps([result["output"], result["tampering"], result["cell_errors"]])
        for line in hidden_lines:
            assert line not in from_student, (name, line)
            hidden = [t for t in result["tests"] if t["hidden"]]
            assert all(line not in t["message"] for t in hidden), (name, line)
        assert "def test_" not in feedback


def test_exfiltration_brings_back_no_test_code(batch):
    result = json.loads((batch["out"] / "results" / "exfiltrate.json").read_text(encoding="utf-8"))
    told = " ".join(result["tampering"]) + result["output"]
    for word in ("failure_message", "test_case", "w_ref", "allclose", "assert"):
        assert word not in told


def test_public_cases_run_before_any_hidden_one():
    """A public case's message (shown to the student) is written before the notebook's process
    has seen an input of a hidden test, so it cannot carry one out."""
    from autograder import judge
    from course import handles

    source = '''
@test_case(points=1, hidden=False)
def test_a(x):
    pass

@test_case(points=1, hidden=True)
def test_b(x):
    pass

@test_case(points=1, hidden=False)
def test_c(x):
    pass
'''

    class Local(handles.LocalTransport):
        deadline = float("inf")
        gone = None

    reports: list[dict] = []
    t = Local({"x": 1})
    judge.run_tests(t, [{"question": "q1", "source": source, "cases": 3},
                        {"question": "q2", "source": source, "cases": 3}], 10.0, reports.append)
    handles.use(None)
    order = [(r["q"], r["i"]) for r in reports if r["t"] == "case"]
    assert order == [("q1", 0), ("q1", 2), ("q2", 0), ("q2", 2), ("q1", 1), ("q2", 1)]


def test_outputs_of_an_earlier_run_never_stay(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "grades.csv").write_text("file,total\nstale row,99\n")
    (out / "report.html").write_text("stale")
    blank = tmp_path / "blank.ipynb"
    blank.write_bytes(forgery.BLANK.read_bytes())
    rows = grade([blank], out)
    assert list(rows) == ["blank.ipynb"]
    assert "stale" not in (out / "report.html").read_text()


def test_the_data_cache_shows_the_stories_only(tmp_path):
    """Trained weights of the solutions live in the data cache: student code sees the stories file."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "tinystories-4MB.txt").write_text("once upon a time . " * 50)
    (cache / "story_model.pt").write_text("SOLUTION WEIGHTS")
    os.chmod(tmp_path, 0o755)
    os.chmod(cache, 0o755)
    probe = json.loads(forgery.BLANK.read_text())
    probe["cells"].append(forgery._code(
        "import os\nfrom course.data import cache_dir\n"
        f"folder = {str(cache)!r}\n"
        "print('LISTING', sorted(os.listdir(folder)) if os.path.isdir(folder) else None)\n"
        "try:\n    print('READ', open(os.path.join(folder, 'story_model.pt')).read())\n"
        "except OSError as e:\n    print('CANNOT', type(e).__name__)\n"))
    nb = tmp_path / "probe.ipynb"
    nb.write_text(json.dumps(probe))
    env = dict(os.environ, COURSE_DATA_CACHE=str(cache))
    env.pop("COURSE_STORIES_FILE", None)
    cmd = [sys.executable, "-m", "autograder", str(nb), "--assignment", forgery.NAME,
           "--out", str(tmp_path / "o"), "--no-progress"]
    subprocess.run(cmd, check=True, capture_output=True, cwd=REPO, env=env, timeout=600)
    output = json.loads((tmp_path / "o" / "results" / "probe.json").read_text())["output"]
    assert "SOLUTION WEIGHTS" not in output
    assert "LISTING ['tinystories-4MB.txt']" in output or "LISTING None" in output, output[-500:]
