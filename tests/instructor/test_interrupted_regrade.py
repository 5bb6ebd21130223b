"""A re-grade stopped half-way (Ctrl-C, the OOM killer, a Slurm time limit) leaves
the finished week as it was. ``course grade`` writes into ``OUT/.staging-PID`` and swaps its outputs
in at the end by one rename of a pointer (:mod:`autograder.outdir`); until then every file of the
previous run, the hand-grade ledger first of all, stays where ``course mark`` and ``course manual``
read it.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import hostile
import lms_samples
import pytest
from test_grade_lms import fill_by_column, with_answer

from autograder import workspace

REPO = Path(__file__).resolve().parents[2]
NAMES = [f"student{k}_1010{k}_2000{k}_00_toy.ipynb" for k in range(3)]


def course(*args: str) -> list[str]:
    return [sys.executable, "-m", "course", *args]


def files_of(out: Path) -> dict[str, bytes]:
    """What OUT shows a plain reader: its files by their documented names, through the links into
    its grading (the gradings themselves, the pointer and the staging folders are hidden folders)."""
    found = {}
    for folder, dirs, files in os.walk(out, followlinks=True):
        if Path(folder) == out:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files = [f for f in files if not f.startswith(".") and os.path.exists(out / f)]
        for f in files:
            p = Path(folder) / f
            found[p.relative_to(out).as_posix()] = p.read_bytes()
    return dict(sorted(found.items()))


@pytest.mark.e2e
def test_an_interrupted_regrade_leaves_the_finished_week_as_it_was(tmp_path):
    os.chmod(tmp_path, 0o755)
    subs = tmp_path / "class"
    subs.mkdir()
    for k, name in enumerate(NAMES):
        (subs / name).write_bytes(with_answer(f"The loss falls ({k}).", "plt.show()"))
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook([(f"S, {k}", f"1010{k}", "", "", "A") for k in range(3)]))
    out = tmp_path / "out"
    grade = course("grade", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out),
                   "--workers", "1", "--no-progress", "--no-similarity",
                           "--export-partial", "--gradebook", str(book))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    first = subprocess.run(grade, capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    filled = fill_by_column(out / "manual.csv", tmp_path / "filled.csv", {n: "1" for n in NAMES})
    merged = subprocess.run(course("manual", str(out), str(filled)), capture_output=True, text=True, cwd=REPO,
                            env=env, timeout=600)
    assert merged.returncode == 0, merged.stderr[-3000:]
    before = files_of(out)
    assert "hand_grades.sqlite" in before and "canvas_import.csv" in before and "grades.csv" in before
    # a re-grade after a fix: one notebook is slow, and the instructor presses Ctrl-C half-way
    (subs / NAMES[2]).write_bytes(with_answer("slow", "import time\ntime.sleep(120)\nplt.show()"))
    # Ctrl-C as in a terminal: a test run started in the background (`make test &`, nohup) inherits
    # SIGINT ignored, and Python then keeps ignoring it
    proc = subprocess.Popen(grade, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 300
        while not list(out.glob(workspace.STAGING_PREFIX + "*")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.3)
        time.sleep(15)                       # the two quick rows are graded; the slow one sleeps
        assert proc.poll() is None, proc.communicate()
        assert files_of(out).items() >= before.items()     # the week's own files, untouched meanwhile
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    after = files_of(out)
    assert after == before, sorted(set(after) ^ set(before)) or [k for k in after if after[k] != before[k]]
    # killed for good (SIGKILL: no clean-up at all): the next run removes what it left
    left = out / f"{workspace.STAGING_PREFIX}999999999"
    (left / "results").mkdir(parents=True)
    staging = workspace.begin_outputs(out)
    assert not left.exists() and staging.is_dir()
    workspace.discard_outputs(staging)
    assert files_of(out) == before


def test_the_swap_replaces_the_outputs_and_never_the_ledger(tmp_path):
    out = tmp_path / "out"
    for name, data in [("grades.csv", b"old"), ("canvas_import.csv", b"old import"), ("results/a.json", b"a"),
                       ("results/gone.json", b"gone"), ("manual/q4.html", b"old page"),
                       ("hand_grades.sqlite", b"ledger"), ("hand_grades.sqlite-wal", b"wal"),
                       ("shards/0-of-2/shard.json", b"s"), ("cache/x.json", b"c"), ("manual-1.csv", b"kept")]:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    staging = workspace.begin_outputs(out)
    for name, data in [("grades.csv", b"new"), ("results/a.json", b"A"), ("manual.csv", b"m"),
                       ("hand_grades.sqlite", b"not a ledger"), ("shards/x", b"no")]:
        (staging / name).parent.mkdir(parents=True, exist_ok=True)
        (staging / name).write_bytes(data)
    workspace.swap_outputs(staging, out)
    assert files_of(out) == {"grades.csv": b"new", "results/a.json": b"A", "manual.csv": b"m",
                             "hand_grades.sqlite": b"ledger", "hand_grades.sqlite-wal": b"wal",
                             "shards/0-of-2/shard.json": b"s", "cache/x.json": b"c", "manual-1.csv": b"kept"}
    assert not staging.exists()
