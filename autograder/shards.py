"""Grading one class on many machines: shards and their merge.

    course grade SUBMISSION... --assignment NN_name --out DIR --shard K/N     (K = 0 ... N-1)
    course merge DIR [SHARD_DIR...]

A shard grades a deterministic share of the class. Every shard reads the whole input (the names of
all rows, their clashes, stems and the per-student cap are the class's, exactly as on one
machine), then keeps the rows whose student key (:func:`autograder.inputs.student_key`: the LMS
id, else the student's upload, else the row's own name) hashes to K modulo N, so that all of one
student's uploads land in one shard. It runs only those and writes ``DIR/shards/K-of-N/``:
``shard.json`` (every row's full :class:`autograder.results.Result`, the shard's sandbox mode and
warnings, and the batch's fingerprint) and the figures its rows drew.

The merge reads the shard results, checks that they are of one batch (same inputs, same
assignment and tests, same N) and that none is missing, and writes into DIR, through the very
functions one-machine grading uses (:func:`autograder.api.write_outputs`), what one-machine
grading writes: grades.csv, results/, feedback/, figures/, manual/, report.html, similarity.csv;
``course merge`` (:mod:`instructor.grade`) then gives the hand grades back and writes the LMS
import, whose rules (one grade per student, held rows) see the whole class. With a shard missing
it writes nothing (exit 1) and names the missing shards. It is safe to run again: the output is
rebuilt from the shard results each time.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from . import inputs
from .assignment import Assignment
from .results import CaseResult, Result

FORMAT = 1
SHARD_FILE = "shard.json"
SHARDS_DIR = "shards"
MODE_ORDER = ("isolated", "user", "weak")      # strongest first


class ShardError(ValueError):
    pass


class ShardsMissing(ShardError):
    """Some shards of the batch have no result (yet): the merge writes nothing."""


def parse(text: str) -> tuple[int, int]:
    """``"K/N"`` -> (K, N), K counted from 0 (Slurm's array task ids and Kubernetes' completion
    indexes are)."""
    k_s, sep, n_s = text.partition("/")
    try:
        k, n = int(k_s), int(n_s)
    except ValueError:
        raise ShardError(f"--shard wants K/N (two whole numbers, K from 0 to N-1), not {text!r}") from None
    if not sep or n < 1 or not 0 <= k < n:
        raise ShardError(f"--shard {text}: K must be from 0 to N-1 (shards are counted from 0)")
    return k, n


def owner(sub: inputs.Submission) -> str:
    """The key that decides a row's shard: the student's (all of one student's rows together)."""
    return inputs.student_key(sub) or "file " + sub.file


def shard_of(sub: inputs.Submission, n: int) -> int:
    digest = hashlib.sha256(owner(sub).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % n


def shard_dir(out: Path, k: int, n: int) -> Path:
    return out / SHARDS_DIR / f"{k}-of-{n}"


def tests_hash(asg: Assignment) -> str:
    """The assignment's grading material as the runner gets it (tests, given code, questions)."""
    doc = {"name": asg.name, "tests": asg.tests_payload(), "given": asg.given_code, "checks": asg.checks,
           "questions": [[q.name, q.points, q.manual, q.all_or_nothing] for q in asg.questions]}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def fingerprint(subs: list[inputs.Submission], asg: Assignment, n: int) -> str:
    """What every shard of one batch agrees on: the class's rows and the grading material."""
    rows = sorted([s.file, s.stem, s.problem or "", shard_of(s, n)] for s in subs)
    doc = {"tests": tests_hash(asg), "n": n, "rows": rows}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode(
        "utf-8", "surrogatepass")).hexdigest()


def select(subs: list[inputs.Submission], k: int, n: int) -> list[inputs.Submission]:
    """The rows of shard K; the other rows' staged copies are removed at once."""
    mine = []
    for s in subs:
        if shard_of(s, n) == k:
            mine.append(s)
        elif s.path is not None:
            s.path.unlink(missing_ok=True)
    return mine


def slurm_context() -> dict:
    """Where a Slurm task runs: its job, task and the limits Slurm gave it (empty outside Slurm)."""
    keys = ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_CPUS_PER_TASK",
            "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_NODE", "SLURMD_NODENAME")
    return {k.lower(): os.environ[k] for k in keys if k in os.environ}


def kubernetes_context() -> dict:
    keys = ("JOB_COMPLETION_INDEX", "HOSTNAME", "KUBERNETES_SERVICE_HOST")
    if "KUBERNETES_SERVICE_HOST" not in os.environ:
        return {}
    return {k.lower(): os.environ[k] for k in keys if k in os.environ}


# ---------------------------------------------------------------- a shard's result

def result_to_json(r: Result) -> dict:
    return dataclasses.asdict(r)


def result_from_json(d: dict) -> Result:
    d = dict(d)
    d["cases"] = [CaseResult(**c) for c in d.get("cases", [])]
    d["figures"] = [(int(c), str(p)) for c, p in d.get("figures", [])]
    d["figure_notes"] = [(int(c), str(p)) for c, p in d.get("figure_notes", [])]
    d["cell_outputs"] = {int(k): v for k, v in d.get("cell_outputs", {}).items()}
    names = {f.name for f in dataclasses.fields(Result)}
    return Result(**{k: v for k, v in d.items() if k in names})


def write_shard(folder: Path, asg: Assignment, results: list[Result], meta: dict, k: int, n: int,
                batch: str, rows: list[str]) -> Path:
    """``folder/shard.json``, written last (through a temporary file): a shard folder without it
    is a shard that did not finish."""
    doc = {"format": FORMAT, "assignment": asg.name, "assignment_folder": str(asg.folder.resolve()),
           "tests": tests_hash(asg), "shard": k, "shards": n, "batch": batch, "rows": sorted(rows),
           "meta": meta, "results": [result_to_json(r) for r in sorted(results, key=lambda r: r.file)]}
    tmp = folder / (SHARD_FILE + ".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8", errors="surrogatepass")
    os.replace(tmp, folder / SHARD_FILE)
    return folder / SHARD_FILE


def clear_shard(folder: Path) -> None:
    """Before a shard runs again: its earlier result goes first (a crash leaves no stale one)."""
    (folder / SHARD_FILE).unlink(missing_ok=True)


# ---------------------------------------------------------------- the merge

@dataclasses.dataclass
class Merged:
    asg_folder: str
    results: list[Result]
    meta: dict
    shard_dirs: list[Path]
    n: int
    tests: str


def find(out: Path, given: list[Path]) -> list[Path]:
    """The shard folders: those given, else every ``out/shards/*`` holding a shard.json."""
    if given:
        return [Path(g) for g in given]
    base = out / SHARDS_DIR
    return sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def load_shards(out: Path, given: list[Path]) -> Merged:
    """Every shard of one batch, read and checked; ShardError says what is wrong or missing."""
    t0 = time.monotonic()
    folders = find(out, given)
    docs: list[tuple[Path, dict]] = []
    unfinished = []
    for f in folders:
        path = f / SHARD_FILE
        if not path.is_file():
            unfinished.append(f)
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8", errors="surrogatepass"))
        except (OSError, ValueError) as exc:
            raise ShardError(f"{path}: not a shard result ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ShardError(f"{path}: not a shard result of this grader (format {doc.get('format')!r})")
        docs.append((f, doc))
    if not docs:
        where = ", ".join(map(str, folders)) or str(out / SHARDS_DIR)
        raise ShardError(f"no shard results in {where}")
    batches = {(d["batch"], d["shards"]) for _, d in docs}
    if len(batches) > 1:
        lines = [f"  {f}: shard {d['shard']} of {d['shards']}, batch {d['batch'][:12]}" for f, d in docs]
        raise ShardError("the shard results are of different batches (other submissions, tests or N); "
                         "grade the missing ones again with the same command, or name the folders to "
                         "merge:\n" + "\n".join(lines))
    n = docs[0][1]["shards"]
    by_k: dict[int, tuple[Path, dict]] = {}
    for f, d in docs:
        by_k.setdefault(int(d["shard"]), (f, d))
    missing = [k for k in range(n) if k not in by_k]
    if missing:
        extra = f" (unfinished: {', '.join(map(str, unfinished))})" if unfinished else ""
        raise ShardsMissing(f"missing {len(missing)} of {n} shards: {', '.join(map(str, missing))}{extra}; "
                            f"nothing was written")
    results: list[Result] = []
    modes: dict[int, str] = {}
    warnings: list[str] = []
    walls, shard_meta = [], []
    for k in range(n):
        f, d = by_k[k]
        got = [result_from_json(r) for r in d["results"]]
        if sorted(r.file for r in got) != sorted(d["rows"]):
            raise ShardError(f"{f}: shard {k} holds {len(got)} rows of its {len(d['rows'])}")
        results += got
        m = d["meta"]
        modes[k] = m.get("mode", "weak")
        walls.append(float(m.get("wall_seconds", 0.0)))
        for w in m.get("warnings", []):
            if w not in warnings:
                warnings.append(w)
        shard_meta.append({"shard": k, "rows": len(got), "mode": modes[k],
                           "wall_seconds": round(walls[-1], 3), "startup_seconds": m.get("startup_seconds"),
                           "slurm": m.get("slurm", {}), "kubernetes": m.get("kubernetes", {})})
    files = [r.file for r in results]
    if len(set(files)) != len(files):
        raise ShardError("two shards hold the same row: the shard results are not of one batch")
    weakest = max(modes.values(), key=lambda m: MODE_ORDER.index(m) if m in MODE_ORDER else len(MODE_ORDER))
    if len(set(modes.values())) > 1:
        warnings.insert(0, "the shards ran in different sandbox modes: " + ", ".join(
            f"shard {k} {m}" for k, m in sorted(modes.items())) + f"; the report names the weakest "
            f"({weakest})")
    first = by_k[0][1]["meta"]
    meta = {"workers": first.get("workers"), "mode": weakest, "cgroups": first.get("cgroups", "none"),
            "cgroups_note": first.get("cgroups_note", ""), "warnings": warnings,
            "wall_seconds": max(walls), "grader_peak_memory_mb": first.get("grader_peak_memory_mb"),
            "shards": shard_meta, "merge_read_seconds": round(time.monotonic() - t0, 3)}
    if first.get("gradebook"):
        meta["gradebook"] = first["gradebook"]
    return Merged(asg_folder=by_k[0][1]["assignment_folder"],
                  results=sorted(results, key=lambda r: r.file), meta=meta,
                  shard_dirs=[by_k[k][0] for k in range(n)], n=n, tests=by_k[0][1]["tests"])


def gradebook_of(out: Path, given: list[Path]) -> tuple[str, str | None] | None:
    """The ``--gradebook`` (and column) the shards were graded with, from the first shard result
    found; None when they had none (or none is there: the merge says so)."""
    for f in find(out, given):
        try:
            doc = json.loads((f / SHARD_FILE).read_text(encoding="utf-8", errors="surrogatepass"))
        except (OSError, ValueError):
            continue
        book = doc.get("meta", {}).get("gradebook") if isinstance(doc, dict) else None
        return (book[0], book[1]) if book else None
    return None


def copy_figures(shard_dirs: list[Path], out: Path) -> None:
    """The figures the shards' rows drew, into ``out/figures`` (the rows name them relative to it)."""
    for f in shard_dirs:
        src = f / "figures"
        if src.is_dir():
            shutil.copytree(src, out / "figures", dirs_exist_ok=True)
