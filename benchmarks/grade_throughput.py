"""Throughput of ``course grade`` against stock Otter and nbgrader (a benchmark, not a test).

    .venv/bin/python benchmarks/grade_throughput.py [--assignment NN_name] [--n 24] [--skip-baselines]

Builds a synthetic class of one assignment (``--n`` submissions, at least 24: copies of the
solution, of the blank student notebook, and "buggy" notebooks that are the solution with one
answer cell put back to the blank prompt), then in one run grades it

1. with ``course grade --workers 1``, then ``--workers 2``;
2. with stock Otter as its users run it: Otter's own autograder zip of the same test files (made by
   ``otter assign``, :func:`benchmarks.baselines.otter_zip`), ``otter run`` one notebook after the
   other, and ``otter grade`` where a Docker engine answers (each of its containers runs what
   ``otter run`` runs, so without Docker ``otter run`` is its per-notebook cost);
3. with nbgrader: the same answers as submissions of the course's nbgrader course, one ``nbgrader
   autograde`` for the class, the tests in the student's kernel (``COURSE_NBGRADER_KERNEL=1``).

Every baseline run must succeed and score what ``course grade`` scores on every question; otherwise
the benchmark prints what differed, no ratio, and exits 1. It prints submissions per minute for
each, the ratios, where the time of a submission goes (per phase, from timings.json: sandbox start,
cells, judge start, tests, clean-up), the grader's overhead per submission (the phases that are
neither the notebook's cells nor the tests; the batch's start-up, paid once, beside it), the tests'
traffic, the peak memory of a worker (one submission's cgroup: its notebook's process and its
judge) and the load average around each run. The last output line is one JSON object.

It also projects a MOOC deadline: 10,000 submissions on N nodes like this one (:func:`projection`).

Targets on a 2-core machine: --workers 2 at least 15x sequential ``otter run`` and 1.9x --workers 1;
overhead at most 0.1 s per submission; tests at most 0.5 s per submission on 08; 10,000 submissions
of 08 in under 15 minutes on 10 nodes. Without ``--assignment`` it uses the first built course
assignment, else the toy assignment of the grader's tests (no nbgrader course: no nbgrader baseline).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import baselines  # noqa: E402
from benchmarks.baselines import Member  # noqa: E402

PY = sys.executable
TOY = REPO / "autograder" / "tests" / "fixtures"
PHASES = ("sandbox_start", "cells", "judge_start", "tests", "cleanup")
OVERHEAD = ("sandbox_start", "judge_start", "cleanup")
MOOC_ROWS = 10_000
MOOC_TARGET_S = 15 * 60
# `course merge` of 10,000 rows from 16 shards, --no-similarity (benchmarks/shards.py --merge-rows
# 10000, docs/scaling.md): what a MOOC's grading pays once after its shards
MERGE_10000_S = 78.7


def find_assignment(name: str | None, tmp: Path) -> tuple[str, Path, Path, Path]:
    """(assignment argument, solution notebook, blank notebook, Otter's autograder zip)."""
    build = REPO / "autograder" / "build"
    suffix = "-solution.ipynb"
    names = [name] if name else sorted(p.name[: -len(suffix)] for p in build.glob("*" + suffix))
    for n in names:
        sol, blank = build / f"{n}-solution.ipynb", REPO / "notebooks" / f"{n}.ipynb"
        if sol.exists() and blank.exists() and (REPO / "autograder" / "assignments" / n).is_dir():
            return n, sol, blank, baselines.otter_zip(n, tmp)
    if name and name != "00_toy":
        raise SystemExit(f"assignment {name} is not built (run `course build`)")
    subprocess.run([PY, str(TOY / "make_toy.py"), "--zip", str(tmp / "zip"), "--out", str(tmp / "toy")],
                   check=True, capture_output=True)
    return str(tmp / "toy"), tmp / "toy" / "00_toy-solution.ipynb", tmp / "toy" / "00_toy.ipynb", \
        tmp / "zip" / "00_toy-autograder.zip"


def _code(nb: dict) -> list[tuple[int, str]]:
    return [(i, "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
            for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]


def last_definitions(nb: dict) -> dict[str, int]:
    """{name: the index of the last code cell that defines it with def or class} (the one graded)."""
    from autograder.mutants import defines
    return {name: i for i, src in _code(nb) for name in defines(src)}


def answer_names(sol: dict, blank: dict) -> list[str]:
    """The names whose last definition differs between the solution and the blank notebook (the
    answers a buggy notebook can leave out), in the blank notebook's order."""
    s, b = last_definitions(sol), last_definitions(blank)
    text, blank_text = dict(_code(sol)), dict(_code(blank))
    return sorted((n for n in b if n in s and text[s[n]] != blank_text[b[n]]), key=lambda n: (b[n], n))


def synthetic_class(sol: Path, blank: Path, n: int, folder: Path,
                    kinds: tuple[str, ...] = ("solution", "blank", "buggy")) -> list[Member]:
    """Solutions, blanks and one-answer-missing notebooks (the solution with one answer's cell put
    back as the blank notebook has it), round robin, written into ``folder``."""
    s, b = json.loads(sol.read_text()), json.loads(blank.read_text())
    folder.mkdir(parents=True)
    names = answer_names(s, b)
    kinds = kinds if names else tuple(k for k in kinds if k != "buggy")
    at_s, at_b = last_definitions(s), last_definitions(b)
    members = []
    for k in range(n):
        kind = kinds[k % len(kinds)]
        m = Member(f"student{k:03d}-{kind}", kind)
        if kind == "solution":
            nb = s
        elif kind == "blank":
            nb = b
        else:
            nb = json.loads(json.dumps(s))
            m.reset = names[(k // len(kinds)) % len(names)]
            nb["cells"][at_s[m.reset]] = b["cells"][at_b[m.reset]]
        (folder / f"{m.stem}.ipynb").write_text(json.dumps(nb))
        members.append(m)
    return members


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def course_grade(assignment: str, subs: Path, out: Path, workers: int) -> tuple[float, float | None]:
    """``course grade`` as an instructor runs it (similarity flags included): its wall seconds and the
    seconds of the similarity step (as it prints them)."""
    t = time.monotonic()
    r = subprocess.run([PY, "-m", "autograder", str(subs), "--assignment", assignment, "--out", str(out),
                        "--workers", str(workers), "--no-progress"], capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        raise SystemExit(r.stdout + r.stderr)
    found = re.search(r"^similarity: .* in ([0-9.]+) s", r.stdout, re.M)
    return time.monotonic() - t, float(found.group(1)) if found else None


def auto_questions(assignment: str) -> list[str]:
    from autograder.assignment import load as load_assignment
    return [q.name for q in load_assignment(assignment).auto]


def phase_summary(timing: dict, kinds: dict[str, str]) -> dict:
    """Mean seconds per phase per submission, over the class and by kind; the overhead phases' sum."""
    rows = [(kinds.get(Path(t["file"]).stem, "?"), t["phases"])
            for t in timing["submissions"] if t.get("phases")]
    if not rows:
        return {}

    def mean(group: list[dict]) -> dict:
        return {p: round(sum(g[p] for g in group) / len(group), 3) for p in PHASES}

    out = {"all": mean([p for _, p in rows]), "submissions_with_phases": len(rows)}
    for kind in sorted({k for k, _ in rows}):
        out[kind] = mean([p for k, p in rows if k == kind])
    out["overhead_per_submission_s"] = round(sum(out["all"][p] for p in OVERHEAD), 3)
    return out


def grade_runs(asg: str, subs: Path, tmp: Path, n: int, kinds: dict[str, str], res: dict) -> None:
    """course grade --workers 1 and 2: times, phases, traffic, memory, load; into ``res``."""
    for w in (1, 2):
        before = load()
        secs, similarity = course_grade(asg, subs, tmp / f"out{w}", w)
        after = load()
        res[f"similarity_workers{w}_s"] = similarity
        timing = json.loads((tmp / f"out{w}" / "timings.json").read_text())
        res[f"course_grade_workers{w}_s"] = round(secs, 1)
        res[f"course_grade_workers{w}_per_min"] = round(60 * n / secs, 2)
        res[f"load_workers{w}"] = [before, after]
        peaks = [t["peak_memory_mb"] for t in timing["submissions"] if t.get("peak_memory_mb")]
        res[f"worker_peak_memory_mb_workers{w}"] = max(peaks) if peaks else None
        print(f"course grade --workers {w}: {secs:.1f} s, {60 * n / secs:.1f} submissions/min "
              f"(load {before[0]} -> {after[0]}; similarity flags {similarity} s of it)", flush=True)
        phases = phase_summary(timing, kinds)
        res[f"phases_workers{w}"] = phases
        startup = timing.get("startup_seconds") or 0.0
        res[f"startup_workers{w}_s"] = startup
        res[f"grading_loop_workers{w}_s"] = timing.get("grading_seconds")
        if phases:
            line = ", ".join(f"{p} {phases['all'][p]:.3f}" for p in PHASES)
            print(f"  per submission (s): {line}", flush=True)
            for kind in ("solution", "blank", "buggy"):
                if kind in phases:
                    print(f"    {kind:8s}: " + ", ".join(f"{p} {phases[kind][p]:.3f}" for p in PHASES))
            print(f"  grader overhead {phases['overhead_per_submission_s']:.3f} s per submission "
                  f"(sandbox start + judge start + clean-up); batch start-up {startup:.2f} s once",
                  flush=True)
        if w == 1:
            executing = sum(t["exec_seconds"] for t in timing["submissions"])
            res["overhead_per_submission_s"] = phases.get("overhead_per_submission_s")
            res["all_overhead_per_submission_s"] = round((secs - executing) / n, 3)
            res["grader_peak_memory_mb"] = timing.get("grader_peak_memory_mb")
            judged = [t for t in timing["submissions"] if "requests" in t]
            if judged:
                for key in ("requests", "answer_bytes", "test_seconds"):
                    res[f"{key}_per_submission"] = round(sum(t[key] for t in judged) / len(judged), 3)
                print(f"  tests: {res['requests_per_submission']:.0f} requests, "
                      f"{res['answer_bytes_per_submission'] / 1024:.0f} KB of answers, "
                      f"{res['test_seconds_per_submission']:.2f} s per submission", flush=True)
            print(f"  peak memory: a worker (one submission's cgroup) "
                  f"{res['worker_peak_memory_mb_workers1']} MB, the grader {res['grader_peak_memory_mb']} MB",
                  flush=True)
    res["grades_identical_across_workers"] = \
        (tmp / "out1" / "grades.csv").read_bytes() == (tmp / "out2" / "grades.csv").read_bytes()


def projection(res: dict, n: int, merge_seconds: float, rows: int = MOOC_ROWS) -> dict:
    """The wall time of ``rows`` submissions on N nodes like this one, one shard of ``--workers 2`` per
    node: the batch's start-up + (rows / N) x the measured seconds per submission of ``--workers 2``
    (its wall time without the start-up, over n) + the merge of ``rows`` rows (``merge_seconds``,
    measured by benchmarks/shards.py --merge-rows 10000)."""
    startup = res.get("startup_workers2_s") or 0.0
    per_sub = (res["course_grade_workers2_s"] - startup) / n
    minutes = {str(nodes): round((startup + -(-rows // nodes) * per_sub + merge_seconds) / 60, 1)
               for nodes in (1, 10, 50, 100)}
    fits = next((k for k in range(1, 1001)
                 if startup + -(-rows // k) * per_sub + merge_seconds <= MOOC_TARGET_S), None)
    return {"rows": rows, "node_seconds_per_submission": round(per_sub, 3), "startup_s": startup,
            "merge_s": merge_seconds, "minutes_on_nodes": minutes, "nodes_for_15_min": fits}


def run_baselines(asg: str, zip_path: Path, members: list[Member], subs: Path, tmp: Path,
                  expected: dict[str, dict[str, float]], otter_grade: bool = True) -> tuple[list, list[str]]:
    """Stock Otter and nbgrader on the class (see the module's docstring): their
    :class:`~benchmarks.baselines.Baseline` results, and one line per run that failed or scored other
    than ``expected`` (course grade's points)."""
    auto = auto_questions(asg)
    notebooks = [subs / f"{m.stem}.ipynb" for m in members]
    done, bad = [], []
    before = load()
    otter = baselines.otter_run(zip_path, notebooks, tmp / "otter-run", auto)
    otter.load = [before, load()]
    done.append(otter)
    if otter_grade and baselines.docker_engine():
        before = load()
        grade = baselines.otter_grade(zip_path, notebooks, tmp / "otter-grade", auto)
        grade.load = [before, load()]
        done.append(grade)
    name = Path(asg).name
    if (REPO / "solutions" / f"{name}.ipynb").exists():
        root = tmp / "nbgrader" / "course"
        baselines.nbgrader_class(name, members, root)
        before = load()
        nbg = baselines.nbgrader_autograde(name, members, root, auto)
        nbg.load = [before, load()]
        done.append(nbg)
    for base in done:
        bad += baselines.problems(base, expected)
    return done, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--assignment", default=None)
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--skip-baselines", action="store_true",
                    help="only time course grade (no ratios against Otter or nbgrader)")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it")
    ap.add_argument("--merge-seconds", type=float, default=MERGE_10000_S,
                    help="the 10,000-row merge's wall time for the projection (benchmarks/shards.py)")
    args = ap.parse_args(argv)
    if args.n < 24:
        ap.error("--n must be at least 24")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="grade-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        asg, sol, blank, zip_ = find_assignment(args.assignment, tmp)
        subs = tmp / "class"
        members = synthetic_class(sol, blank, args.n, subs)
        kinds = {m.stem: m.kind for m in members}
        print(f"{args.n} submissions of {Path(asg).name}; {os.cpu_count()} cores; load {load()}", flush=True)
        res: dict = {"assignment": Path(asg).name, "submissions": args.n, "cores": os.cpu_count(),
                     "load_at_start": load()}
        grade_runs(asg, subs, tmp, args.n, kinds, res)
        res["ratio_workers2_vs_workers1"] = round(
            res["course_grade_workers1_s"] / res["course_grade_workers2_s"], 2)
        loops = res.get("grading_loop_workers1_s"), res.get("grading_loop_workers2_s")
        res["ratio_workers2_vs_workers1_grading_loop"] = round(loops[0] / loops[1], 2) if all(loops) else None
        fixed = [round(res[f"course_grade_workers{w}_s"] - (res.get(f"grading_loop_workers{w}_s") or 0), 1)
                 for w in (1, 2)]
        print(f"--workers 2 against --workers 1: {res['ratio_workers2_vs_workers1']}x the whole command "
              f"(target >= 1.9x); {res['ratio_workers2_vs_workers1_grading_loop']}x the grading loop alone "
              f"(the whole command's fixed part, the same for any number of notebooks: {fixed[0]} s and "
              f"{fixed[1]} s: torch imported once, reports written)")
        res["projection"] = proj = projection(res, args.n, args.merge_seconds)
        print(f"projection, {proj['rows']:,} submissions of {Path(asg).name} on N nodes like this one "
              f"(--workers 2 each; start-up {proj['startup_s']:.1f} s, "
              f"{proj['node_seconds_per_submission']:.2f} s per submission per node, merge "
              f"{proj['merge_s']:.0f} s): " + ", ".join(f"{k} nodes {v} min" for k, v in
                                                      proj["minutes_on_nodes"].items())
              + f"; under 15 min from {proj['nodes_for_15_min']} nodes (target: 10)", flush=True)
        status = 0
        if not args.skip_baselines:
            expected = baselines.course_points(tmp / "out1", auto_questions(asg))
            done, bad = run_baselines(asg, zip_, members, subs, tmp, expected)
            res["baseline_failures"] = len(bad)
            for base in done:
                key = base.name.replace(" ", "_")
                res[f"{key}_s"] = round(base.seconds, 1)
                res[f"{key}_per_min"] = round(60 * args.n / base.seconds, 2)
                res[f"{key}_load"] = base.load
                print(f"{base.name}: {base.seconds:.1f} s, {60 * args.n / base.seconds:.1f} submissions/min, "
                      f"{base.seconds / args.n:.2f} s each (load {base.load[0][0]} -> {base.load[1][0]})",
                      flush=True)
            if not any(b.name == "otter grade" for b in done):
                print("otter grade: no Docker engine here; each of its containers runs the zip's "
                      "run_autograder (otter.run.run_autograder, as otter run does): otter run's time per "
                      "notebook plus a container's start")
            if bad:
                print(f"{len(bad)} baseline run(s) failed or scored other than course grade; no ratios:")
                print("\n".join("  " + line for line in bad))
                status = 1
            else:
                for base in done:
                    key = base.name.replace(" ", "_")
                    for w in (1, 2):
                        res[f"ratio_workers{w}_vs_{key}"] = round(
                            base.seconds / res[f"course_grade_workers{w}_s"], 2)
                    print(f"ratios vs {base.name}: workers 1 {res[f'ratio_workers1_vs_{key}']}x, "
                          f"workers 2 {res[f'ratio_workers2_vs_{key}']}x"
                          + (" (target >= 15x)" if base.name == "otter run" else ""))
        if not res["grades_identical_across_workers"]:
            print("the grades differ between --workers 1 and --workers 2")
            status = 1
        res["load_at_end"] = load()
        print(json.dumps(res))
        return status
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
