"""Throughput of ``course grade`` against plain sequential ``otter run`` (a benchmark, not a test).

    .venv/bin/python benchmarks/grade_throughput.py [--assignment NN_name] [--n 24]

Builds a synthetic class of one assignment (``--n`` submissions, at least 24: copies of the
solution, of the blank student notebook, and "buggy" notebooks that are the solution with one
answer cell put back to the blank prompt), then in one run grades it

1. with ``course grade --workers 1``,
2. with ``course grade --workers 2``,
3. one submission after the other with plain ``otter run`` and the assignment's autograder zip,

and prints submissions per minute for each, the ratios, and the grader's overhead per
submission: (wall time of the --workers 1 run - time spent executing notebooks and tests) / n,
which includes starting each submission's sandbox (namespaces, new root, cgroup) and cleaning up
after it. The last output line is one JSON object with all the numbers.

Targets on a 2-core machine: --workers 2 at least 1.7x sequential otter run; overhead under 2 s.
Without ``--assignment`` it uses the first built course assignment (autograder/build/*-solution.ipynb
with its autograder zip), else the toy assignment of the grader's tests.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
TOY = REPO / "autograder" / "tests" / "fixtures"


def find_assignment(name: str | None, tmp: Path) -> tuple[str, Path, Path, Path]:
    """(assignment argument, solution notebook, blank notebook, autograder zip)."""
    build = REPO / "autograder" / "build"
    suffix = "-solution.ipynb"
    names = [name] if name else sorted(p.name[: -len(suffix)] for p in build.glob("*" + suffix))
    for n in names:
        sol, zip_, blank = build / f"{n}-solution.ipynb", build / f"{n}-autograder.zip", \
            REPO / "notebooks" / f"{n}.ipynb"
        material = REPO / "autograder" / "assignments" / n
        if sol.exists() and zip_.exists() and blank.exists() and material.is_dir():
            return n, sol, blank, zip_
    if name and name != "00_toy":
        raise SystemExit(f"assignment {name} is not built (run `course build`)")
    subprocess.run([PY, str(TOY / "make_toy.py"), "--zip", str(tmp / "zip"), "--out", str(tmp / "toy")],
                   check=True, capture_output=True)
    return str(tmp / "toy"), tmp / "toy" / "00_toy-solution.ipynb", tmp / "toy" / "00_toy.ipynb", \
        tmp / "zip" / "00_toy-autograder.zip"


def synthetic_class(sol: Path, blank: Path, n: int, folder: Path) -> None:
    """Solutions, blanks and one-answer-missing notebooks, round robin."""
    s, b = json.loads(sol.read_text()), json.loads(blank.read_text())
    folder.mkdir(parents=True)
    diffs = []
    if len(s["cells"]) == len(b["cells"]):
        diffs = [i for i, (x, y) in enumerate(zip(s["cells"], b["cells"], strict=True))
                 if x["cell_type"] == "code" and x["source"] != y["source"]]
    for k in range(n):
        kind = ("solution", "blank", "buggy")[k % 3] if diffs else ("solution", "blank")[k % 2]
        if kind == "solution":
            nb = s
        elif kind == "blank":
            nb = b
        else:
            nb = json.loads(json.dumps(s))
            i = diffs[(k // 3) % len(diffs)]
            nb["cells"][i] = b["cells"][i]
        (folder / f"student{k:03d}-{kind}.ipynb").write_text(json.dumps(nb))


def course_grade(assignment: str, subs: Path, out: Path, workers: int) -> float:
    t = time.monotonic()
    r = subprocess.run([PY, "-m", "autograder", str(subs), "--assignment", assignment, "--out", str(out),
                        "--workers", str(workers), "--no-progress"], capture_output=True, text=True,
                       cwd=REPO)
    if r.returncode != 0:
        raise SystemExit(r.stdout + r.stderr)
    return time.monotonic() - t


def otter_run_all(zip_: Path, subs: Path, out: Path) -> tuple[float, int]:
    otter = str(Path(PY).parent / "otter")
    t = time.monotonic()
    failures = 0
    for nb in sorted(subs.glob("*.ipynb")):
        o = out / nb.stem
        o.mkdir(parents=True)
        r = subprocess.run([otter, "run", "-a", str(zip_), "-o", str(o), str(nb)], capture_output=True,
                           cwd=o)
        failures += r.returncode != 0
    return time.monotonic() - t, failures


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--assignment", default=None)
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--skip-otter", action="store_true", help="only time course grade")
    args = ap.parse_args(argv)
    if args.n < 24:
        ap.error("--n must be at least 24")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="grade-bench-") as tmp_s:
        tmp = Path(tmp_s)
        asg, sol, blank, zip_ = find_assignment(args.assignment, tmp)
        subs = tmp / "class"
        synthetic_class(sol, blank, args.n, subs)
        print(f"{args.n} submissions of {Path(asg).name}; {os.cpu_count()} cores", flush=True)
        res: dict = {"assignment": Path(asg).name, "submissions": args.n, "cores": os.cpu_count()}
        for w in (1, 2):
            secs = course_grade(asg, subs, tmp / f"out{w}", w)
            res[f"course_grade_workers{w}_s"] = round(secs, 1)
            res[f"course_grade_workers{w}_per_min"] = round(60 * args.n / secs, 2)
            print(f"course grade --workers {w}: {secs:.1f} s, {60 * args.n / secs:.1f} submissions/min",
                  flush=True)
            if w == 1:
                timing = json.loads((tmp / "out1" / "timings.json").read_text())
                executing = sum(t["exec_seconds"] for t in timing["submissions"])
                res["overhead_per_submission_s"] = round((secs - executing) / args.n, 2)
                res["executing_per_submission_s"] = round(executing / args.n, 2)
                res["grader_peak_memory_mb"] = timing.get("grader_peak_memory_mb")
                print(f"  executing notebooks and tests: {executing / args.n:.2f} s per submission; "
                      f"grader overhead {res['overhead_per_submission_s']:.2f} s per submission", flush=True)
                # the tests' traffic with the notebook's process (requests and answers over the pipes)
                judged = [t for t in timing["submissions"] if "requests" in t]
                if judged:
                    for key in ("requests", "answer_bytes", "test_seconds"):
                        res[f"{key}_per_submission"] = round(sum(t[key] for t in judged) / len(judged), 3)
                    print(f"  tests: {res['requests_per_submission']:.0f} requests, "
                          f"{res['answer_bytes_per_submission'] / 1024:.0f} KB of answers, "
                          f"{res['test_seconds_per_submission']:.2f} s per submission", flush=True)
        same = (tmp / "out1" / "grades.csv").read_bytes() == (tmp / "out2" / "grades.csv").read_bytes()
        res["grades_identical_across_workers"] = same
        if not args.skip_otter:
            secs, failures = otter_run_all(zip_, subs, tmp / "otter")
            res["otter_run_sequential_s"] = round(secs, 1)
            res["otter_run_sequential_per_min"] = round(60 * args.n / secs, 2)
            res["otter_run_failures"] = failures
            print(f"otter run, sequential: {secs:.1f} s, {60 * args.n / secs:.1f} submissions/min",
                  flush=True)
            for w in (1, 2):
                res[f"ratio_workers{w}_vs_otter_run"] = round(secs / res[f"course_grade_workers{w}_s"], 2)
            print(f"ratios vs otter run: workers 1 {res['ratio_workers1_vs_otter_run']}x, "
                  f"workers 2 {res['ratio_workers2_vs_otter_run']}x (target >= 1.7x)")
        res["ratio_workers2_vs_workers1"] = round(
            res["course_grade_workers1_s"] / res["course_grade_workers2_s"], 2)
        print(json.dumps(res))
        return res


if __name__ == "__main__":
    main()
