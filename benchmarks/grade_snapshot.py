"""Every score the course's own answers get, written down to compare a refactor with.

    python -m benchmarks.grade_snapshot OUT.json [NN_name ...] [--workers 2]
    python -m benchmarks.grade_snapshot --compare BEFORE.json AFTER.json

For each notebook (default: every notebook course.toml lists) it grades, in one ``python -m
autograder`` batch, the built solution, the blank student notebook, every mutant, degenerate, shortcut
and correct-alternative answer (autograder/assignments/NN_name/), and writes one JSON document: per
notebook, per submission, the grading status, the points of each question, and each test case's
verdict and message. The engine is called through its command line, so the same script snapshots the
code before and after a change.

``--compare`` prints every submission whose status, points or test verdicts differ between two
snapshots (and, separately, cases whose message alone changed) and exits 1 when a point or a verdict
differs. Needs ``course build`` first (the solutions are autograder/build/NN_name-solution.ipynb).
"""
from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_class(notebook: str, out: Path) -> None:
    """The solution, the blank and every mutant, degenerate, shortcut and correct-alternative answer of
    one notebook, in ``out``."""
    import shutil

    from autograder import alternatives, degenerate, mutants, shortcuts
    out.mkdir(parents=True, exist_ok=True)
    mutants.write_submissions(notebook, out)
    degenerate.write_submissions(notebook, out)
    degenerate.write_submissions(notebook, out, shortcuts.shortcuts(notebook))
    alternatives.write_submissions(notebook, out)
    solution = ROOT / "autograder" / "build" / f"{notebook}-solution.ipynb"
    shutil.copy(solution, out / f"{notebook}__solution.ipynb")
    shutil.copy(ROOT / "notebooks" / f"{notebook}.ipynb", out / f"{notebook}__blank.ipynb")


def grade_class(notebook: str, subs: Path, out: Path, workers: int) -> dict[str, dict]:
    """{submission stem: {status, points: {q: p}, cases: {question:name: [passed, message]}}}."""
    cmd = [sys.executable, "-m", "autograder", str(subs), "--assignment", notebook, "--out", str(out),
           "--workers", str(workers), "--no-progress", "--no-similarity"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{notebook}: the engine exited with {done.returncode}\n{done.stderr[-2000:]}")
    rows: dict[str, dict] = {}
    with open(out / "grades.csv", newline="") as f:
        for row in csv.DictReader(f):
            stem = Path(row["file"]).stem
            fixed = {"file", "total_points_earned", "percent_correct", "grading_status"}
            entry = {"status": row["grading_status"], "total": row["total_points_earned"],
                     "points": {k: v for k, v in row.items() if k not in fixed}, "cases": {}}
            path = out / "results" / f"{stem}.json"
            if path.exists():
                for case in json.loads(path.read_text()).get("tests", []):
                    entry["cases"][f"{case['question']}:{case['name']}"] = [case["passed"],
                                                                          case.get("message", "")]
            rows[stem] = entry
    return rows


def snapshot(notebooks: list[str], workers: int) -> dict:
    found: dict = {}
    for nb in notebooks:
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory() as tmp:
            write_class(nb, Path(tmp) / "subs")
            found[nb] = grade_class(nb, Path(tmp) / "subs", Path(tmp) / "out", workers)
        print(f"{nb}: {len(found[nb])} submissions in {time.monotonic() - t0:.0f} s", flush=True)
    return found


def compare(before: dict, after: dict) -> int:
    """Print what differs; 1 when a status, a point or a verdict does."""
    differs = messages = 0
    for nb in sorted(set(before) | set(after)):
        b, a = before.get(nb, {}), after.get(nb, {})
        for stem in sorted(set(b) | set(a)):
            if stem not in b or stem not in a:
                print(f"{nb} {stem}: only {'after' if stem in a else 'before'}")
                differs += 1
                continue
            x, y = b[stem], a[stem]
            lines = []
            if x["status"] != y["status"]:
                lines.append(f"status {x['status']!r} -> {y['status']!r}")
            for q in sorted(set(x["points"]) | set(y["points"])):
                if x["points"].get(q) != y["points"].get(q):
                    lines.append(f"{q}: {x['points'].get(q)} -> {y['points'].get(q)}")
            for case in sorted(set(x["cases"]) | set(y["cases"])):
                cx, cy = x["cases"].get(case), y["cases"].get(case)
                if cx is None or cy is None or cx[0] != cy[0]:
                    lines.append(f"{case}: {cx and cx[0]} -> {cy and cy[0]}")
                elif cx[1] != cy[1]:
                    messages += 1
            if lines:
                differs += 1
                print(f"{nb} {stem}: " + "; ".join(lines))
    total = sum(len(v) for v in after.values())
    print(f"{differs} of {total} submissions differ in status, points or verdicts; "
          f"{messages} test messages differ")
    return 1 if differs else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.grade_snapshot",
                                description=__doc__.split("\n")[0])
    p.add_argument("paths", nargs="*", help="OUT.json [NN_name ...], or with --compare BEFORE AFTER")
    p.add_argument("--compare", action="store_true")
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    if args.compare:
        if len(args.paths) != 2:
            p.error("--compare takes BEFORE.json AFTER.json")
        before, after = (json.loads(Path(x).read_text()) for x in args.paths)
        return compare(before, after)
    if not args.paths:
        p.error("OUT.json is required")
    from instructor import registry
    course = registry.notebooks()
    out, notebooks = Path(args.paths[0]), args.paths[1:] or course
    unknown = [n for n in notebooks if n not in course]
    if unknown:
        p.error(f"unknown notebook(s): {', '.join(unknown)}")
    out.write_text(json.dumps(snapshot(notebooks, args.workers), indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
