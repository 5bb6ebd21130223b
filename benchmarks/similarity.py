"""Similarity flags (autograder/similarity.py): how long classes of 200, 2,000 and 10,000 take, and how
the chosen method compares with the alternatives on the test's class.

    python benchmarks/similarity.py                         # both (timing: 200 and 2,000)
    python benchmarks/similarity.py --time-only --sizes 200,2000,10000
    python benchmarks/similarity.py --compare-only          # the library comparison on the test's class

Timing: classes of 08_causal generated from the project's own answers (each piece drawn from
benchmarks/similarity_class.py's correct answers, one in eight swapped for a mutant of the mutation
suite that replaces it; a tenth of the class disguised copies of an earlier student, renamed,
reordered, recommented or all at once; every answer cell made unique by a line of its own, so
nothing is done once for two students), written as `course grade` writes a folder (questions.json,
results/<stem>.json, report.html), then compared as the grader's hook does it: `python -m
autograder.similarity DIR --here` in a process of its own (the same hash seed, memory cap and time
limit), which imports, reads, normalises, fingerprints, compares, writes similarity.csv and the
report's section. Printed for each size: wall time, CPU time (the process and its workers), peak
memory (the largest process's resident set), the flags and the load average beside it. A run that
fails or runs out of time prints so, and no ratio is printed over it.

Comparison: the test's class (30 honest students, six disguised copies, a copy of the master), every
pair scored by (1) copydetect as it comes (its own pygments tokens, raw code, the course's code as
boilerplate, its own score: matched characters over fingerprinted characters, both files), (2) the
course's pipeline on copydetect's own tokens (boilerplate, the class's common fingerprints and the
master's removed; no AST normalising), (3) the course's pipeline as shipped (AST normalising, then
copydetect), (4) pycode_similar (AST of each function, diffed; no boilerplate; the copies and 120
sampled independent pairs: it takes 0.4 s a pair). For each: the lowest
score of a copied pair, the highest of an independent pair, and precision and recall at the best
threshold and at 0.6. The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYCODE_SAMPLE = 120
sys.path.insert(0, str(ROOT))

from autograder import similarity as sim  # noqa: E402
from autograder.assignment import load  # noqa: E402
from autograder.mutants import load_mutants  # noqa: E402
from benchmarks import similarity_class as sc  # noqa: E402


def graded_folder(out: Path, books: dict[str, dict]) -> None:
    """A folder as course grade writes it, as far as course similarity reads it."""
    (out / "results").mkdir(parents=True, exist_ok=True)
    (out / "questions.json").write_text(json.dumps({"assignment": sc.NAME}))
    for row in sc.answer_rows(books):
        doc = {"file": row["file"], "id": row["id"], "answer_code": row["answer_code"]}
        (out / "results" / f"{Path(row['file']).stem}.json").write_text(json.dumps(doc))
    (out / "report.html").write_text(f"<!doctype html><html><body>{sim.PLACEHOLDER}</body></html>\n")


def variants() -> dict[str, list[str]]:
    """Each piece's answers: the class's correct ones and the mutants that replace that piece."""
    out = {p: [a for a in sc.ANSWERS[p]] for p in sc.PIECES}
    for m in load_mutants(sc.NAME):
        if m.replaces in out:
            out[m.replaces].append(m.code)
    return out


def class_of(n: int, seed: int = 1) -> dict[str, dict]:
    rng = random.Random(seed)
    disguises = list(sc.DISGUISES.values())
    answers = variants()
    cells_of: list[dict[str, str]] = []
    books = {}
    for i in range(n):
        if i % 10 == 9:            # a disguised copy of an earlier student
            cells = sc.disguise(cells_of[rng.randrange(len(cells_of))], disguises[i % len(disguises)])
        else:
            cells = {}
            for p in sc.PIECES:
                mutant = len(answers[p]) > len(sc.ANSWERS[p]) and rng.random() < 1 / 8
                cells[p] = rng.choice(answers[p][len(sc.ANSWERS[p]):] if mutant else sc.ANSWERS[p])
            cells_of.append(cells)
        # a line of each student's own in every cell: no two students' cells are the same text
        mine = {p: (src + f"\nstudent_mark_{i} = {i}\n" if src.strip() else src) for p, src in cells.items()}
        books[f"student{i:05d}.ipynb"] = sc.notebook(mine)
    return books


def run_hook(out: Path) -> tuple[float, float, int, int, str]:
    """The hook's process on ``out``: (wall s, CPU s, peak KiB of its largest process, exit status,
    last line), timed out as the hook times it out."""
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(ROOT))
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "autograder.similarity", str(out), "--here"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    status, usage = 0, None
    while usage is None:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            usage = ru
        elif time.monotonic() - t0 > sim.WORKER_SECONDS:
            proc.kill()
        else:
            time.sleep(0.2)
    seconds = time.monotonic() - t0
    lines = (proc.stdout.read() if proc.stdout else "").strip().splitlines()
    code = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, code, (lines or ["(nothing)"])[-1]


def time_class(n: int) -> dict:
    books = class_of(n)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        graded_folder(out, books)
        del books
        seconds, cpu, peak, code, line = run_hook(out)
        csv_path = out / "similarity.csv"
        rows = sum(1 for _ in open(csv_path)) - 1 if csv_path.is_file() else None
    load_avg = [round(x, 2) for x in os.getloadavg()]
    ok = code == 0 and rows is not None and seconds <= sim.WORKER_SECONDS
    print(f"class of {n} submissions of {sc.NAME}: {'' if ok else 'FAILED (' + str(code) + '): '}"
          f"{seconds:.1f} s wall, {cpu:.1f} s of CPU, peak {peak / 1024:.0f} MiB, {rows} flags; load "
          f"{load_avg[0]:.1f} on {os.cpu_count()} cores ({line})", flush=True)
    return {"submissions": n, "ok": ok, "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
            "peak_mib": round(peak / 1024), "flags": rows, "cpus": os.cpu_count(), "load_average": load_avg}


def timings(sizes: list[int]) -> list[dict]:
    """Each size once, and how each grew on the smallest: never over a failed run."""
    runs = [time_class(n) for n in sizes]
    base = runs[0]
    for r in runs[1:]:
        if base["ok"] and r["ok"]:
            grew = r["seconds"] / base["seconds"]
            print(f"  {r['submissions']} against {base['submissions']}: x{grew:.1f} wall, "
                  f"x{r['submissions'] / base['submissions']:.0f} submissions")
        else:
            print(f"  {r['submissions']} against {base['submissions']}: no ratio (a run failed)")
    return runs


# ---------------------------------------------------------------- the comparison

def copydetect_plain(rows: list[dict], course: list[str]) -> dict[frozenset, float]:
    """copydetect as it comes, per question, pooled: its pygments tokens, its score."""
    import io

    import numpy as np
    from copydetect import CodeFingerprint, compare_files
    k, win = 25, 6                                  # copydetect's defaults: noise 25, guarantee 30
    boiler = np.array(sorted(CodeFingerprint("c.py", k, 1, fp=io.StringIO("\n".join(course))).hashes))
    fps = {}
    for r in rows:
        by_q: dict[str, list[str]] = {}
        for c in r["answer_code"]:
            by_q.setdefault(c["question"], []).append(c["source"])
        fps[r["file"]] = {q: CodeFingerprint("a.py", k, win, boilerplate=boiler, fp=io.StringIO("\n".join(s)))
                          for q, s in by_q.items()}
    scores = {}
    for a, b in itertools.combinations(sorted(fps), 2):
        matched = covered = 0.0
        for q in set(fps[a]) | set(fps[b]):
            fa, fb = fps[a].get(q), fps[b].get(q)
            covered += (fa.token_coverage if fa else 0) + (fb.token_coverage if fb else 0)
            if fa is not None and fb is not None and len(fa.filtered_code) and len(fb.filtered_code):
                _o, (s1, s2), _sl = compare_files(fa, fb)
                matched += s1 * fa.token_coverage + s2 * fb.token_coverage
        scores[frozenset((a, b))] = matched / covered if covered else 0.0
    return scores


def pipeline(rows: list[dict], course: list[str], master: list[dict],
             pygments: bool) -> dict[frozenset, float]:
    flags = sim.compare(rows, course, master, threshold=0.0, pygments=pygments)
    return {frozenset((f.a.file, f.b.file)): f.score for f in flags if f.kind == "pair"}


def pycode_similar(rows: list[dict], copies: set[frozenset],
                   sample: int = PYCODE_SAMPLE) -> dict[frozenset, float]:
    """pycode_similar on each notebook's answer code (both directions, averaged): the copied pairs
    and a seeded sample of the independent ones (it takes about 0.4 s a pair here)."""
    import pycode_similar as pcs
    code = {r["file"]: "\n\n".join(c["source"] for c in r["answer_code"]) for r in rows}
    every = [frozenset(p) for p in itertools.combinations(sorted(code), 2)]
    others = sorted((p for p in every if p not in copies), key=sorted)
    chosen = sorted(copies, key=sorted) + random.Random(0).sample(others, min(sample, len(others)))
    scores = {}
    for a, b in (sorted(p) for p in chosen):
        both = []
        for ref, cand in ((a, b), (b, a)):
            try:
                result = pcs.detect([code[ref], code[cand]], module_level=True)
                both.append(pcs.summarize(result[0][1])[0])
            except Exception:                       # noqa: BLE001  (its parser's failures)
                both.append(0.0)
        scores[frozenset((a, b))] = sum(both) / 2
    return scores


def judge(scores: dict[frozenset, float], copies: set[frozenset], names: list[str],
          every: list[frozenset] | None = None) -> dict:
    every = every or [frozenset(p) for p in itertools.combinations(sorted(names), 2)]
    values = {p: float(scores.get(p, 0.0)) for p in every}
    copied = [values[p] for p in every if p in copies]
    honest = [values[p] for p in every if p not in copies]

    def at(t: float) -> dict:
        flagged = {p for p in every if values[p] >= t}
        tp = len(flagged & copies)
        return {"threshold": round(t, 3), "precision": round(tp / len(flagged), 3) if flagged else 1.0,
                "recall": round(tp / len(copies), 3), "flagged": len(flagged)}

    cut = (min(copied) + max(honest)) / 2
    return {"lowest_copy": round(min(copied), 3), "highest_independent": round(max(honest), 3),
            "gap": round(min(copied) - max(honest), 3), "at_0.6": at(0.6), "at_midpoint": at(cut)}


def compare_methods() -> dict:
    books, how, copies = sc.build_class()
    rows = sc.answer_rows(books)
    course = load(sc.NAME).given_code
    master = sim.master_answers(sc.NAME)
    names = sorted(books)
    result = {}
    per_disguise = {}
    import importlib.util
    extra = [("pycode_similar (sampled pairs)", lambda: pycode_similar(rows, copies))]
    if importlib.util.find_spec("pycode_similar") is None:
        print("pycode_similar is not installed (pip install pycode-similar==1.4): left out")
        extra = []
    for label, method in (("copydetect as it comes", lambda: copydetect_plain(rows, course)),
                          ("course pipeline, copydetect tokens",
                           lambda: pipeline(rows, course, master, True)),
                          ("course pipeline, AST-normalised (shipped)",
                           lambda: pipeline(rows, course, master, False)),
                          *extra):
        t0 = time.monotonic()
        scores = method()
        every = list(scores) if label.startswith("pycode_similar") else None
        result[label] = judge(scores, copies, names, every) | {"seconds": round(time.monotonic() - t0, 1),
                                                               "pairs_scored": len(every or []) or None}
        for p in copies:
            copy_name = next(x for x in p if x.startswith("copy"))
            per_disguise.setdefault(how[copy_name], {})[label] = round(scores.get(p, 0.0), 3)
        print(f"{label}: {result[label]}")
    print("score of each disguised copy with its source:")
    for disguise, by in sorted(per_disguise.items()):
        print(f"  {disguise}: " + ", ".join(f"{k} {v}" for k, v in by.items()))
    return {"methods": result, "per_disguise": per_disguise}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="200,2000", help="class sizes, comma-separated (200,2000,10000)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--time-only", action="store_true")
    which.add_argument("--compare-only", action="store_true")
    args = p.parse_args()
    if os.environ.get("PYTHONHASHSEED") != "0":       # copydetect hashes with hash(): fix the seed
        env = dict(os.environ, PYTHONHASHSEED="0")
        return subprocess.call([sys.executable, *sys.argv], env=env)
    doc: dict = {"benchmark": "similarity"}
    if not args.compare_only:
        doc["timing"] = timings([int(x) for x in args.sizes.split(",")])
    if not args.time_only:
        doc["comparison"] = compare_methods()
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
