"""The cost of grading in shards, and of re-grading with the cache (a benchmark, not a test).

    .venv/bin/python benchmarks/shards.py [--assignment 08_causal] [--n 8] [--shards 2]
                                         [--merge-rows 10000] [--cache-n 40] [--skip-cache]

Needs ``course build`` (autograder/build/NN-solution.ipynb). Measures, on this machine:

1. **one machine**: a synthetic class of ``--n`` submissions (solutions, blanks, one-answer-missing
   notebooks, round robin; benchmarks/grade_throughput.py's) graded with ``--workers 2``: wall time,
   and seconds per submission per worker (the sum of the rows' own times / n);
2. **shards**: the same class as ``--shards`` shards run one after the other (each with
   ``--workers 2``, as on a node of its own), then ``course merge``: each shard's wall time, its
   start-up (process start to the first submission running: Python and torch imported, the whole
   input read, the fork server started), and the merge's wall time; the merged grades.csv must be
   the one-machine one (checked);
3. **a merge at scale**: a class of ``--merge-rows`` notebooks (hard links to the small class's
   files) and 16 shard results made of (2)'s real results (renamed, each with its row's SHA-256,
   sealed), merged with ``--no-similarity``: the merge's wall time and peak memory for a class of
   that size, every row checked against its file;
4. **the cache** (``--cache-n`` submissions, at least 40, of the same assignment, with another
   week's notebook and an unreadable file among them): graded with ``--cache``, again with one
   question's test file changed, and from scratch without the cache; how many rows were reused, re-run
   with the changed question's tests only, or graded afresh, the times, and that the grades equal the
   grading from scratch.

Prints each number and, last, one JSON line with all of them, and a projection: the wall time of
10,000 submissions on 1, 10, 50 and 100 nodes of this machine's kind (2 workers each) =
start-up + (10,000 / nodes) x seconds per submission / 2 + the merge.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
PY = sys.executable

from grade_throughput import find_assignment, synthetic_class  # noqa: E402


def course(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    t = time.monotonic()
    r = subprocess.run([PY, "-m", "course", *args], capture_output=True, text=True, cwd=REPO,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    if r.returncode != 0:
        raise SystemExit(f"course {' '.join(args[:3])}...: {r.returncode}\n"
                         f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return time.monotonic() - t, r


def grades(out: Path, columns: list[str] | None = None) -> dict:
    rows = list(csv.DictReader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8"))))
    return {r["file"]: ([r[c] for c in columns] if columns else r) for r in rows}


def per_submission(out: Path) -> float:
    doc = json.loads((out / "timings.json").read_text())
    subs = doc["submissions"]
    return sum(s["seconds"] for s in subs) / max(1, len(subs))


def merge_at_scale(sharded: Path, subs: Path, rows: int, tmp: Path) -> tuple[float, float]:
    """A class of ``rows`` notebooks (hard links to the small class's files) and its 16 shard results
    (the small class's real results, renamed, with each row's SHA-256, sealed as a shard seals them),
    merged with ``--no-similarity``: (the merge's wall time, its peak memory in MB). The merge reads
    the whole class again and checks every row."""
    import resource

    from autograder import assignment, inputs, provenance
    from autograder import shards as shards_mod
    docs = [json.loads(p.read_text())["body"] for p in sorted(sharded.glob("shards/*/shard.json"))]
    template = {r["file"]: r for d in docs for r in d["results"]}
    names = sorted(template)
    big = tmp / "merge-scale"
    folder = big / "class"
    folder.mkdir(parents=True)
    for i in range(rows):
        name = names[i % len(names)]
        os.link(subs / name, folder / f"student{i:05d}-{name}")
    (big / "staging").mkdir()
    everyone = inputs.collect([str(folder)], big / "staging")
    hashes = provenance.content_hashes(everyone)
    asg = assignment.load(docs[0]["assignment_folder"])
    n = 16
    where = shards_mod.assign(everyone, n)
    limits = docs[0]["provenance"]["limits"]
    for k in range(n):
        mine = [s for s in everyone if where[s.file] == k]
        results = []
        for s in mine:
            r = dict(template[s.file.split("-", 1)[1]], file=s.file, stem=s.stem, sha256=hashes[s.file],
                     figures=[])
            results.append(shards_mod.result_from_json(r))
        out = shards_mod.shard_dir(big, k, n)
        out.mkdir(parents=True)
        shards_mod.write_shard(out, asg, results, dict(docs[0]["meta"]), k, n, everyone,
                               [s.file for s in mine], limits, [str(folder)])
    shutil.rmtree(big / "staging", ignore_errors=True)
    seconds, _ = course("merge", str(big), "--no-similarity")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    shutil.rmtree(big)
    return seconds, peak_mb


def balance(rows: int, n: int, seed: int = 0) -> dict:
    """The split of a class of ``rows`` notebooks (Canvas names; students of 1 to 3 uploads, most 1)
    into ``n`` shards: rows per shard, max/min."""
    import random

    from autograder import inputs
    from autograder import shards as shards_mod
    rng, subs, i = random.Random(seed), [], 0
    while len(subs) < rows:
        for j in range(min(rng.choice((1, 1, 1, 1, 2, 3)), rows - len(subs))):
            name = f"student{i}_{10000 + i}_{200000 + 10 * i + j}_nb{j}.ipynb"
            subs.append(inputs.Submission(file=name, path=None, stem=name[:-6]))
        i += 1
    where = shards_mod.assign(subs, n)
    sizes = sorted(list(where.values()).count(k) for k in range(n))
    return {"rows": rows, "students": i, "shards": n, "min": sizes[0], "max": sizes[-1],
            "max_over_min": round(sizes[-1] / sizes[0], 3)}


def cache_class(sol: Path, blank: Path, n: int, folder: Path) -> None:
    synthetic_class(sol, blank, n - 2, folder)
    shutil.copy(REPO / "notebooks" / "03_attention.ipynb", folder / "zz-another-week.ipynb")
    (folder / "zz-unreadable.ipynb").write_text("this is not a notebook")


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser()
    p.add_argument("--assignment", default="08_causal")
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--shards", type=int, default=2)
    p.add_argument("--merge-rows", type=int, default=10_000)
    p.add_argument("--cache-n", type=int, default=40)
    p.add_argument("--skip-cache", action="store_true")
    p.add_argument("--only-cache", action="store_true", help="measure (4) alone")
    p.add_argument("--only-balance", action="store_true", help="the split of classes of 34 and 1,000 alone")
    p.add_argument("--only-merge", action="store_true",
                   help="the split, and (3) after grading the class in 2 shards")
    args = p.parse_args(argv)
    if args.only_balance or args.only_merge:
        found = {"balance": [balance(34, 3), balance(1000, 3), balance(1000, 16)]}
        print("shard balance (rows per shard, max/min): " + "; ".join(
            f"{b['rows']} rows ({b['students']} students) in {b['shards']}: {b['min']}-{b['max']} "
            f"({b['max_over_min']})" for b in found["balance"]))
        if args.only_merge:
            with tempfile.TemporaryDirectory(prefix="bench-merge-") as t:
                tmp = Path(t)
                os.chmod(tmp, 0o755)
                name, sol, blank, _zip = find_assignment(args.assignment, tmp)
                subs = tmp / "class"
                synthetic_class(sol, blank, args.n, subs)
                for k in range(2):
                    course("grade", str(subs), "--out", str(tmp / "sharded"), "--assignment", name,
                           "--workers", "2", "--no-progress", "--shard", f"{k}/2")
                seconds, peak = merge_at_scale(tmp / "sharded", subs, args.merge_rows, tmp)
                found.update(merge_rows=args.merge_rows, merge_seconds_at_scale=round(seconds, 2),
                             merge_peak_mb_at_scale=round(peak))
                print(f"merge of {args.merge_rows} rows from 16 shards: {seconds:.1f} s, {peak:.0f} MB")
        print(json.dumps(found))
        return found
    if args.only_cache:
        with tempfile.TemporaryDirectory(prefix="bench-cache-") as t:
            tmp = Path(t)
            os.chmod(tmp, 0o755)
            name, sol, blank, _zip = find_assignment(args.assignment, tmp)
            found = {"cache": measure_cache(name, sol, blank, args.cache_n, tmp)}
        print(json.dumps(found))
        return found
    found: dict = {"assignment": args.assignment, "n": args.n, "shards": args.shards, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as t:
        tmp = Path(t)
        os.chmod(tmp, 0o755)
        name, sol, blank, _zip = find_assignment(args.assignment, tmp)
        subs = tmp / "class"
        synthetic_class(sol, blank, args.n, subs)
        common = ["--assignment", name, "--workers", "2", "--no-progress"]
        wall, _ = course("grade", str(subs), "--out", str(tmp / "one"), *common)
        found["one_machine_seconds"] = round(wall, 2)
        found["seconds_per_submission"] = round(per_submission(tmp / "one"), 2)
        print(f"one machine: {args.n} submissions in {wall:.1f} s; {found['seconds_per_submission']} s "
              "per submission (its own wall time, 2 at once)")
        shard_walls, startups = [], []
        for k in range(args.shards):
            w, _ = course("grade", str(subs), "--out", str(tmp / "sharded"), *common,
                          "--shard", f"{k}/{args.shards}")
            folder = tmp / "sharded" / "shards" / f"{k}-of-{args.shards}"
            meta = json.loads((folder / "shard.json").read_text())
            # start-up: the process's own wall time beyond the grading run's, plus the run's set-up
            startups.append(round(w - meta["meta"]["wall_seconds"] + meta["meta"]["startup_seconds"], 2))
            shard_walls.append(round(w, 2))
        merge_wall, _ = course("merge", str(tmp / "sharded"))
        same = grades(tmp / "sharded") == grades(tmp / "one")
        found.update(shard_seconds=shard_walls, shard_startup_seconds=startups,
                     merge_seconds=round(merge_wall, 2), merged_equals_one_machine=same)
        print(f"shards: {shard_walls} s; start-up per shard {startups} s; merge {merge_wall:.1f} s; "
              f"merged grades.csv equals one machine's: {same}")
        if args.merge_rows:
            found["merge_rows"] = args.merge_rows
            seconds, peak = merge_at_scale(tmp / "sharded", subs, args.merge_rows, tmp)
            found["merge_seconds_at_scale"], found["merge_peak_mb_at_scale"] = round(seconds, 2), round(peak)
            print(f"merge of {args.merge_rows} rows from 16 shards (--no-similarity; every row checked "
                  f"against its file): {seconds:.1f} s, {peak:.0f} MB")
        if not args.skip_cache:
            found["cache"] = measure_cache(name, sol, blank, args.cache_n, tmp)
    startup = max(found["shard_startup_seconds"])
    for nodes in (1, 10, 50, 100):
        found[f"projection_10000_on_{nodes}_nodes_minutes"] = round(
            (startup + 10_000 / nodes * found["seconds_per_submission"] / 2
             + found.get("merge_seconds_at_scale", found["merge_seconds"])) / 60, 1)
    print("projection, 10,000 submissions, nodes of 2 workers: " + ", ".join(
        f"{nodes} nodes {found[f'projection_10000_on_{nodes}_nodes_minutes']} min"
        for nodes in (1, 10, 50, 100)))
    print(json.dumps(found))
    return found


def measure_cache(name: str, sol: Path, blank: Path, n: int, tmp: Path) -> dict:
    asg = tmp / name
    shutil.copytree(REPO / "autograder" / "assignments" / name, asg)
    subs = tmp / "cache-class"
    cache_class(sol, blank, n, subs)
    common = ["--assignment", str(asg), "--workers", "2", "--no-progress", "--no-similarity"]
    out = tmp / "cached"
    first, r1 = course("grade", str(subs), "--out", str(out), *common, "--cache")
    tests = sorted((asg / "tests").glob("*.py"))
    changed = tests[len(tests) // 2]      # one question's hidden test "fixed": one more assertion
    changed.write_text(changed.read_text() + "\n\n@test_case(points=0, hidden=True)\n"
                       "def test_benchmark_extra():\n    assert True\n")
    again, r2 = course("grade", str(subs), "--out", str(out), *common, "--cache")
    fresh, _ = course("grade", str(subs), "--out", str(tmp / "fresh"), *common)
    auto = ["total_points_earned", "grading_status"]
    same = grades(out, auto) == grades(tmp / "fresh", auto)
    line = [x for x in r2.stdout.splitlines() if x.startswith("cache:")][0]
    print(f"cache, {n} submissions: first {first:.1f} s; after changing {changed.name}: {again:.1f} s "
          f"({line}); from scratch {fresh:.1f} s; same grades: {same}")
    return {"n": n, "first_seconds": round(first, 2), "changed": changed.stem,
            "regrade_seconds": round(again, 2), "fresh_seconds": round(fresh, 2), "line": line,
            "same_grades": same}


if __name__ == "__main__":
    main()
