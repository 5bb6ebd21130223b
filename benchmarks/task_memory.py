"""What one grading task really uses in memory: the numbers behind ``course slurm``'s ``--mem``
(a benchmark, not a test; run as root, needs ``course build``).

    .venv/bin/python benchmarks/task_memory.py [--assignments 08_causal 09_gpt] [--workers 1 2] [--n 4]

For each assignment and worker count, grades ``--n`` copies of the solution notebook with
``course grade --workers W`` inside a memory cgroup of its own (v2 or v1), and reads back:

- the task's peak: everything it started together (the grader, the fork server with torch
  imported, the judges, every submission), as Slurm's cgroup counts a task (page cache included);
- each submission's own peak (its cgroup's, ``peak_memory_mb`` in results/);
- the grader process's own peak (``grader_peak_memory_mb``).

Then ``base`` = task peak - W x the largest submission peak: what the task needs besides its
submissions. Prints each run and, last, one JSON line with all of them.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable


def own_cgroup() -> tuple[str, Path]:
    """("v2" or "v1", the memory cgroup folder this process is in)."""
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return "v1", Path("/sys/fs/cgroup/memory") / path.lstrip("/")
    path = next(line.split(":", 2)[2] for line in lines if line.startswith("0::"))
    return "v2", Path("/sys/fs/cgroup") / path.lstrip("/")


def measured(cmd: list[str]) -> tuple[int, float]:
    """Run ``cmd`` in a new memory cgroup; (its peak bytes, seconds)."""
    kind, parent = own_cgroup()
    group = parent / f"bench-task-{os.getpid()}-{time.monotonic_ns()}"
    group.mkdir()
    t = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, cwd=REPO, env=dict(os.environ, OMP_NUM_THREADS="1"),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd[:6])}...: exit {proc.returncode}\n{out[-3000:]}")
        peak = int((group / ("memory.peak" if kind == "v2" else "memory.max_usage_in_bytes")).read_text())
        return peak, time.monotonic() - t
    finally:
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def run(assignment: str, workers: int, n: int, tmp: Path) -> dict:
    sol = REPO / "autograder" / "build" / f"{assignment}-solution.ipynb"
    if not sol.exists():
        raise SystemExit(f"{sol} is missing: run `course build`")
    subs = tmp / f"{assignment}-{workers}"
    subs.mkdir()
    for k in range(n):
        shutil.copy(sol, subs / f"student{k:02d}.ipynb")
    out = tmp / f"out-{assignment}-{workers}"
    peak, seconds = measured([PY, "-m", "course", "grade", str(subs), "--assignment", assignment, "--out",
                              str(out), "--workers", str(workers), "--no-progress", "--no-similarity"])
    timings = json.loads((out / "timings.json").read_text())
    rows = [json.loads(p.read_text()) for p in (out / "results").glob("*.json")]
    subs_mb = [r["peak_memory_mb"] for r in rows if r.get("peak_memory_mb")]
    found = {"assignment": assignment, "workers": workers, "n": n, "seconds": round(seconds, 1),
             "task_peak_mb": round(peak / 2**20), "submission_peak_mb": max(subs_mb) if subs_mb else None,
             "grader_peak_mb": timings.get("grader_peak_memory_mb"),
             "statuses": sorted({r["grading_status"] for r in rows})}
    if subs_mb:
        found["base_mb"] = round(peak / 2**20 - workers * max(subs_mb))
    print(json.dumps(found))
    return found


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser()
    p.add_argument("--assignments", nargs="+", default=["08_causal", "09_gpt"])
    p.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    p.add_argument("--n", type=int, default=4)
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("run as root: the task is measured in a memory cgroup of its own")
    found = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as t:
        tmp = Path(t)
        os.chmod(tmp, 0o755)
        for a in args.assignments:
            for w in args.workers:
                found.append(run(a, w, args.n, tmp))
    print(json.dumps(found))
    return found


if __name__ == "__main__":
    main()
