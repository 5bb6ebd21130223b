"""``course grade --cache`` re-grades only what changed, and never loses a hand grade.

A small class of the toy assignment (two solutions, one with a figure; a blank; another week's
notebook) is graded with --cache, graded again unchanged (nothing runs: every row reused, the same
grades.csv, feedback and figures), hand-graded with course manual, then one question's hidden
test is changed (q3 now expects 4): only q3's tests run again (the judge's requests show it),
another week's notebook is not run, the grades equal a grading without the cache from scratch, and
the hand grades are all kept.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import hostile
import pytest

from autograder import outdir

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e
SOL, PLOT, BLANK = "sol.ipynb", "plot.ipynb", "blank.ipynb"
WRONG = "week3.ipynb"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course", *args], capture_output=True, text=True,
                          timeout=900, cwd=REPO, env=dict(os.environ, OMP_NUM_THREADS="1"))


def rows(out: Path) -> dict[str, dict]:
    text = (out / "grades.csv").read_text(encoding="utf-8")
    return {r["file"]: r for r in csv.DictReader(io.StringIO(text))}


def requests(out: Path) -> dict[str, int]:
    doc = json.loads((out / "timings.json").read_text())
    return {s["file"]: s.get("requests", 0) for s in doc["submissions"]}


def files(folder: Path) -> dict[str, bytes]:
    """OUT as its readers see it: the current grading at its documented names, and the files kept
    beside it (the cache, the ledger); not the versions' own folder names."""
    current = outdir.resolve(folder)
    found = {p.relative_to(current).as_posix(): p.read_bytes() for p in sorted(current.rglob("*"))
             if p.is_file()}
    kept = [p for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()]
    found.update({p.relative_to(folder).as_posix(): p.read_bytes() for p in kept
                  if not p.relative_to(folder).as_posix().startswith(".")})
    return dict(sorted(found.items()))


def test_regrade_reruns_only_what_a_changed_test_can_affect_and_keeps_hand_grades(tmp_path):
    os.chmod(tmp_path, 0o755)
    asg = tmp_path / "00_toy"
    shutil.copytree(hostile.FIXTURE, asg)
    subs = tmp_path / "class"
    subs.mkdir()
    nb = hostile.load()
    nb["cells"][14] = hostile.code_cell("import matplotlib.pyplot as plt\n"
                                        "plt.plot([0, 1], [1, 0])\nplt.show()\n")
    (subs / PLOT).write_bytes(hostile.dump(nb))
    (subs / SOL).write_bytes(hostile.SOLUTION.read_bytes())
    (subs / BLANK).write_bytes(hostile.BLANK.read_bytes())
    (subs / WRONG).write_bytes((REPO / "notebooks" / "03_attention.ipynb").read_bytes())
    out = tmp_path / "out"

    def grade(folder: Path = out, *extra: str) -> subprocess.CompletedProcess:
        res = run("grade", str(subs), "--assignment", str(asg), "--out", str(folder), "--workers", "2",
                  "--no-progress", "--no-similarity", *extra)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        return res

    first = grade(out, "--cache")
    assert "cache: reused 0 rows whole (not run), re-ran 0 with only the changed questions' tests, " \
           "graded 4 afresh" in first.stdout
    before = files(out)
    before_requests = requests(out)
    assert len([p for p in before if p.startswith("figures/plot/")]) == 1

    again = grade(out, "--cache")            # nothing changed: nothing runs
    assert "cache: reused 4 rows whole (not run), re-ran 0" in again.stdout
    assert "graded 0 afresh" in again.stdout
    after = files(out)
    for name in ("grades.csv", "manual.csv"):
        assert after[name] == before[name], name
    assert {k: v for k, v in after.items() if k.startswith(("feedback/", "figures/", "manual/"))} == \
        {k: v for k, v in before.items() if k.startswith(("feedback/", "figures/", "manual/"))}

    # hand grades, then the instructor fixes q3's hidden test and grades again with the cache
    with open(out / "manual.csv", newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    for r in table[1:]:
        r[table[0].index("q4")] = "1"
    filled = tmp_path / "filled.csv"
    with open(filled, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(table)
    merged = run("manual", str(out), str(filled))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    q3 = asg / "tests" / "q3.py"
    q3.write_text(q3.read_text().replace("== 3", "== 4"))
    third = grade(out, "--cache")
    assert "cache: reused 1 rows whole (not run), re-ran 3 with only the changed questions' tests (q3), " \
           "graded 0 afresh" in third.stdout
    assert re.search(r"kept 4 hand grades of 4 students", third.stdout), third.stdout
    # only q3's cases ran against the re-run notebooks: fewer requests than all questions' cases
    now = requests(out)
    for f in (SOL, PLOT):
        assert 0 < now[f] < before_requests[f], (now, before_requests)
    # the same grades as a grading from scratch of the changed assignment, without the cache
    fresh = tmp_path / "fresh"
    grade(fresh)
    auto = ["q1", "q2", "q3", "total_points_earned", "percent_correct", "grading_status"]
    got, want = rows(out), rows(fresh)
    assert {f: [r[k] for k in auto] for f, r in got.items()} == \
        {f: [r[k] for k in auto] for f, r in want.items()}
    assert got[SOL]["q3"] == "0.0" and got[SOL]["q1"] == "2.0" and got[SOL]["final_points_earned"] == "5.0"
    for name in (SOL, PLOT, BLANK):       # the tests' feedback as fresh, the hand grades after it
        mine, theirs = ((d / "feedback" / f"{name[:-6]}.md").read_text() for d in (out, fresh))
        assert mine.split("## q1", 1)[1].startswith(theirs.split("## q1", 1)[1].rstrip("\n")), name
