"""Named mistakes (autograder/mistakes.py): what naming costs and how much of the project's own buggy
answers it names (a benchmark, not a test).

    .venv/bin/python benchmarks/named_mistakes.py [--notebooks 03_attention,08_causal]

For each notebook with named mistakes, its mutants that fail (the project's own buggy answers) and
its solution are graded in one run by ``course grade --workers 1``, twice each way and alternated:
with the notebook's grading material as it is, and with a copy whose mutants say nothing (no
``says:`` line, so the judge names nothing); each row's time is the faster of its two.
It prints, per notebook: the catalogue's size, the share of the buggy answers
whose mistake is named (a named mutant told its own id; any other id named counts as wrong), the
seconds of a failing submission with and without naming (the mean of its rows' times, and of the
judge's test phase) and their ratio. Points must be equal in both runs and every row ``ok``;
otherwise it says what differed, prints no ratio and exits 1. The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
REPEATS = 2
sys.path.insert(0, str(ROOT))

from autograder import assignment, mutants  # noqa: E402


def material(name: str, dest: Path, named: bool) -> Path:
    """A copy of the notebook's grading material (with its blank notebook beside it); without
    ``named``, its mutants' ``says:`` lines are left out."""
    shutil.copytree(assignment.ASSIGNMENTS / name, dest)
    shutil.copy(ROOT / "notebooks" / f"{name}.ipynb", dest / f"{name}.ipynb")
    if not named:
        for path in (dest / "mutants").glob("*.py"):
            lines = path.read_text(encoding="utf-8").split("\n")
            path.write_text("\n".join(x for x in lines if not x.startswith("# says:")), encoding="utf-8")
    return dest


def grade(folder: Path, subs: Path, out: Path) -> tuple[dict[str, dict], dict[str, dict], str]:
    """``course grade`` of ``subs`` with ``folder``'s material: rows and timings by stem, and what
    went wrong ('' when nothing did)."""
    done = subprocess.run([sys.executable, "-m", "course", "grade", str(subs), "--assignment", str(folder),
                           "--out", str(out), "--workers", "1", "--no-progress", "--no-similarity"],
                          capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if done.returncode != 0:
        return {}, {}, f"course grade exited {done.returncode}: {done.stderr[-500:]}"
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {Path(r["file"]).stem: r for r in csv.DictReader(f)}
    timings = {Path(s["file"]).stem: s for s in json.loads((out / "timings.json").read_text())["submissions"]}
    bad = [f"{stem}: {r['grading_status']}" for stem, r in rows.items() if r["grading_status"] != "ok"]
    return rows, timings, "; ".join(bad)


def named_ids(out: Path, stem: str) -> list[str]:
    doc = json.loads((out / "results" / f"{stem}.json").read_text(encoding="utf-8"))
    return [m["id"] for m in doc.get("mistakes", [])]


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def one(name: str, tmp: Path) -> dict:
    subs = tmp / name / "class"
    subs.mkdir(parents=True)
    buggy = {m.name: m for m in mutants.load_mutants(name) if m.expect == "fail"}
    for m in buggy.values():
        nbformat.write(mutants.mutant_notebook(m), subs / f"{m.name}.ipynb")
    shutil.copy(mutants.BUILD / f"{name}-solution.ipynb", subs / "solution.ipynb")
    folders = {tag: material(name, tmp / name / f"material-{tag}" / name, tag == "with")
               for tag in ("with", "without")}
    runs: dict[str, tuple] = {}
    for k in range(REPEATS):        # alternated, so that a change in the machine's load hits both
        for tag in ("with", "without"):
            out = tmp / name / f"out-{tag}-{k}"
            rows, times, bad = grade(folders[tag], subs, out)
            if tag in runs:           # each row's fastest time of the repeats
                before = runs[tag][1]
                times = {s: {**t, **{k: min(t.get(k, 0.0), before[s].get(k, 0.0))
                                     for k in ("seconds", "test_seconds")}}
                         for s, t in times.items() if s in before}
                bad = "; ".join(x for x in (runs[tag][2], bad) if x)
            runs[tag] = (rows, times, bad, tmp / name / f"out-{tag}-0")
    problems = [f"{tag}: {runs[tag][2]}" for tag in runs if runs[tag][2]]
    points = {tag: {s: r["total_points_earned"] for s, r in runs[tag][0].items()} for tag in runs}
    if not problems and points["with"] != points["without"]:
        problems.append("points differ between the runs: " + ", ".join(
            s for s in points["with"] if points["with"][s] != points["without"].get(s)))
    catalogue = [m for ms in assignment.load(name).known_mistakes.values() for m in ms if m.named]
    res: dict = {"notebook": name, "catalogue": len(catalogue), "buggy_answers": len(buggy),
                 "problems": problems}
    if problems:
        return res
    out = runs["with"][3]
    ids = {stem: named_ids(out, stem) for stem in buggy}
    right = sum(ids[s] == [s] for s in buggy)
    wrong = sum(bool(ids[s]) and ids[s] != [s] for s in buggy)
    failing = [s for s in buggy if float(points["with"][s]) < float(points["with"]["solution"])]
    for tag in ("with", "without"):
        t = runs[tag][1]
        res[f"seconds_{tag}"] = round(mean([t[s]["seconds"] for s in failing]), 3)
        res[f"test_seconds_{tag}"] = round(mean([t[s].get("test_seconds", 0.0) for s in failing]), 3)
    res.update({"named_rightly": right, "named_wrongly": wrong, "share_named": round(right / len(buggy), 3),
                "ratio_seconds": round(res["seconds_with"] / res["seconds_without"], 3),
                "added_test_seconds": round(res["test_seconds_with"] - res["test_seconds_without"], 3)})
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notebooks", default="",
                    help="comma-separated (default: every notebook with named mistakes)")
    args = ap.parse_args(argv)
    names = [n for n in args.notebooks.split(",") if n] or [
        n for n in assignment.names() if assignment.load(n).known_mistakes]
    results = []
    with tempfile.TemporaryDirectory(prefix="named-mistakes-") as tmp:
        for name in names:
            r = one(name, Path(tmp))
            results.append(r)
            if r["problems"]:
                print(f"{name}: NOT MEASURED: {'; '.join(r['problems'])[:800]}", flush=True)
                continue
            print(f"{name}: {r['catalogue']} named mistakes; {r['named_rightly']} of "
                  f"{r['buggy_answers']} buggy answers named rightly ({r['share_named']:.0%}), "
                  f"{r['named_wrongly']} wrongly; a failing "
                  f"submission {r['seconds_with']} s with naming, {r['seconds_without']} s without "
                  f"({r['ratio_seconds']}x; the judge's tests +{r['added_test_seconds']} s)", flush=True)
    print(json.dumps(results))
    return 1 if any(r["problems"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
