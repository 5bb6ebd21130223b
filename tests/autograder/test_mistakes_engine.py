"""Naming a mistake changes nothing else of a row, graded through the engine: a submission whose
Attention hangs on the judge's naming inputs (and only there) keeps the status and points its tests
gave it and is named nothing, while the same code without the trap is named its mistake."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import mutants

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(
    not (mutants.BUILD / "03_attention-solution.ipynb").exists(), reason="03_attention is not built")]
# the judge's large-energy batch (autograder/checks/mistakes.py): no test and no cell of 03 uses it
TRAP = "    if tuple(q.shape) == (2, 6, 4) and float(q.abs().max()) > 20:\n        {}\n"
# a wait that the runner's time limit cannot end (its alarm is caught): the judge gives up on the
# request, and the answer that comes after finds it gone
SPIN = ("import time\n        end = time.time() + 25\n        while time.time() < end:\n"
        "            try:\n                time.sleep(0.5)\n            except BaseException:\n"
        "                pass")


def test_a_piece_that_hangs_while_its_mistake_is_named_keeps_its_row(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    base = next(m for m in mutants.load_mutants("03_attention") if m.name == "no_scale").code
    for name, trap in (("plain", "pass"), ("hangs", "import time; time.sleep(600)"), ("spins", SPIN)):
        code = base.replace("def Attention(q, k, v):\n", "def Attention(q, k, v):\n" + TRAP.format(trap))
        nb = mutants.swap_last("03_attention", lambda s: "Attention" in mutants.defines(s), code, "no cell")
        nbformat.write(nb, subs / f"{name}.ipynb")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "course", "grade", str(subs), "--assignment", "03_attention",
                           "--out", str(out), "--workers", "2", "--no-progress", "--no-similarity",
                           "--cell-timeout", "10"],
                          capture_output=True, text=True, timeout=900, cwd=REPO,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    for column in ("grading_status", "q1", "total_points_earned"):
        for other in ("hangs", "spins"):
            assert rows[f"{other}.ipynb"][column] == rows["plain.ipynb"][column], (other, column)
    assert rows["plain.ipynb"]["grading_status"] == "ok"

    def named(stem: str) -> list[str]:
        return [m["id"] for m in json.loads((out / "results" / f"{stem}.json").read_text())["mistakes"]]
    assert named("plain") == ["no_scale"] and named("hangs") == named("spins") == []
    assert "The mistake, named" in (out / "feedback" / "plain.md").read_text()
    assert "no_scale" in (out / "mistakes.csv").read_text()
    assert "Named mistakes" in (out / "report.html").read_text()


def test_a_timeout_in_the_tests_stays_the_rows_status_and_costs_only_its_question(tmp_path):
    """A right Attention that, on one test's input, waits past every time limit: the row says the
    notebook stopped answering in q1's tests (not in the last question's, whose tests could not
    run after it), keeps what q1's earlier tests earned, and the naming that follows (q1 lost
    points) neither runs nor clears that status."""
    subs = tmp_path / "subs"
    subs.mkdir()
    right = next(m for m in mutants.load_mutants("03_attention") if m.name == "ok_einsum").code
    slow_path = "    if q.dim() == 4:\n        " + SPIN.replace("25", "40") + "\n"
    code = right.replace("def Attention(q, k, v):\n", "def Attention(q, k, v):\n" + slow_path)
    assert code != right
    nb = mutants.swap_last("03_attention", lambda s: "Attention" in mutants.defines(s), code, "no cell")
    nbformat.write(nb, subs / "slow.ipynb")
    nbformat.write(mutants.solution_notebook("03_attention"), subs / "solution.ipynb")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "course", "grade", str(subs), "--assignment", "03_attention",
                           "--out", str(out), "--workers", "2", "--no-progress", "--no-similarity",
                           "--cell-timeout", "10"], capture_output=True, text=True, timeout=900, cwd=REPO,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    slow, full = rows["slow.ipynb"], rows["solution.ipynb"]
    assert slow["grading_status"].startswith("timeout: the notebook stopped answering during the tests of q1")
    assert 0 < float(slow["q1"]) < float(full["q1"])
    assert json.loads((out / "results" / "slow.json").read_text())["mistakes"] == []
