"""Grading one class on many machines: shards and their merge.

    course grade SUBMISSION... --assignment NN_name --out DIR --shard K/N     (K = 0 ... N-1)
    course merge DIR [SHARD_DIR...] [--shards N] [--wait]

A shard grades a deterministic share of the class. Every shard reads the whole input (the names of
all rows, their clashes, stems and the per-student cap are the class's, exactly as on one
machine), then takes its share of :func:`assign`: whole students (a student's uploads together:
:func:`owner`), biggest first, each to the shard with the fewest rows so far, so that shards differ
by at most one student's rows, and every shard, reading the same class, computes the same split.
It runs only its rows and writes ``DIR/shards/K-of-N/``: ``shard.json`` (every row's full
:class:`autograder.results.Result` with its notebook's SHA-256, what the rows were graded with
(:class:`autograder.provenance.Provenance`), the shard's sandbox mode and warnings, the batch's
fingerprint), sealed with the key ``DIR/shards/.seal-key``, and the figures its rows drew.

The merge (:mod:`autograder.shard_merge`) reads the shard results and uses them only when every row checks
out against the files and the code running now: each seal; the grader's version, the assignment
and each question's tests; one set of limits; the class as it is now (its rows and their split);
and every row's notebook bytes, read again from the submissions the shards graded. A row that does
not match makes the merge refuse, naming the rows and the shards to grade again; nothing is
written. With a shard missing or unfinished it writes nothing (exit 1) and names them; with one
failed for good (its pod wrote ``failed``) it stops and names it (exit 3). Shard folders of another
N are ignored, with a note, when the set started last is complete (an older complete set is never
merged in place of an unfinished newer one). Then it writes into
DIR, through the very functions one-machine grading uses (:func:`autograder.api.write_outputs`),
what one-machine grading writes; ``course merge`` (:mod:`instructor.grade`) then gives the hand
grades back and writes the LMS import, whose rules (one grade per student, held rows) see the
whole class. It is safe to run again: the output is rebuilt from the shard results each time.
"""
from __future__ import annotations

import contextlib
import dataclasses
import heapq
import json
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from . import inputs, mistakes, provenance
from .assignment import Assignment
from .provenance import Provenance
from .results import CaseResult, Result
from .runmeta import RunMeta

FORMAT = 2
SHARD_FILE = "shard.json"
FAILED_FILE = "failed"        # the pod's shell writes it when this shard's last attempt failed
HEARTBEAT_FILE = "heartbeat"  # a running shard rewrites it; the merge sees a killed one by its silence
RUN_ENV = "COURSE_RUN_ID"     # the run a shard belongs to, as the rendered Slurm and Kubernetes jobs set it
HEARTBEAT_ENV = "COURSE_HEARTBEAT_SECONDS"
HEARTBEAT_SECONDS = 30.0
SHARDS_DIR = "shards"
MODE_ORDER = ("isolated", "user", "weak")      # strongest first
FOLDER_NAME = re.compile(r"^(\d+)-of-(\d+)$")


class ShardError(ValueError):
    """The shard results cannot be merged (exit 2)."""
    exit_code = 2


class ShardsMissing(ShardError):
    """Some shard has not finished yet (exit 1: wait, or grade it again)."""
    exit_code = 1


class ShardFailed(ShardError):
    """A shard failed for good (exit 3: grade it again)."""
    exit_code = 3


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
    """The key that keeps rows together: the student's (all of one student's rows in one shard)."""
    return inputs.student_key(sub) or "file " + sub.file


def assign(subs: list[inputs.Submission], n: int) -> dict[str, int]:
    """{row: its shard}: each student's rows together; students biggest first (then by key), each
    to the shard with the fewest rows so far (then the lowest K). Shards differ by at most one
    student's rows; the split depends only on the class's row names, so every shard agrees."""
    groups: dict[str, list[str]] = {}
    for s in subs:
        groups.setdefault(owner(s), []).append(s.file)
    heap = [(0, k) for k in range(n)]
    where: dict[str, int] = {}
    for _, files in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        load, k = heapq.heappop(heap)
        for f in files:
            where[f] = k
        heapq.heappush(heap, (load + len(files), k))
    return where


def shard_dir(out: Path, k: int, n: int) -> Path:
    return out / SHARDS_DIR / f"{k}-of-{n}"


def fingerprint(subs: list[inputs.Submission], asg: Assignment, n: int) -> str:
    """What every shard of one batch agrees on: the class's rows, their split, the grading material."""
    where = assign(subs, n)
    rows = sorted([s.file, s.stem, s.problem or "", where[s.file]] for s in subs)
    return provenance.digest({"setup": provenance.setup_hash(asg), "tests": provenance.question_hashes(asg),
                              "n": n, "rows": rows})


def select(subs: list[inputs.Submission], k: int, n: int) -> list[inputs.Submission]:
    """The rows of shard K; the other rows' staged copies are removed at once."""
    where = assign(subs, n)
    mine = []
    for s in subs:
        if where[s.file] == k:
            mine.append(s)
        elif s.path is not None:
            s.path.unlink(missing_ok=True)
    return mine


def run_id(given: str | None = None) -> str:
    """The run a shard belongs to: ``--run-id``, else ``$COURSE_RUN_ID``, else the Slurm array job's
    (``slurm-<SLURM_ARRAY_JOB_ID>``: every task of one array, and a requeued one, share it), else ""
    (shards graded by hand). The merge takes only the shards of one run, so an older set beside this
    one, whatever its folders' clocks say, is never merged in its place."""
    if given:
        return given
    if os.environ.get(RUN_ENV):
        return os.environ[RUN_ENV]
    if os.environ.get("SLURM_ARRAY_JOB_ID"):
        return f"slurm-{os.environ['SLURM_ARRAY_JOB_ID']}"
    return ""


def slurm_array(run: str) -> str | None:
    """The Slurm array job id of a run id made by :func:`run_id` (None for any other run)."""
    m = re.fullmatch(r"slurm-(\d+)", run or "")
    return m[1] if m else None


@contextlib.contextmanager
def heartbeat(folder: Path, k: int, n: int, run: str, every: float | None = None) -> Iterator[None]:
    """While a shard runs, ``folder/heartbeat`` is rewritten every ``every`` seconds (a counter, so
    that the merge sees it change by its own clock, whatever the shard's node's clock says). A
    SIGKILL, a lost node or an evicted pod leaves no word but this file's silence: ``course merge
    --wait`` takes a shard whose heartbeat has not moved for ``--stale-after`` seconds as failed.
    The file is removed once the shard's result is written; otherwise it is left to go quiet."""
    every = every if every is not None else float(os.environ.get(HEARTBEAT_ENV) or HEARTBEAT_SECONDS)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / HEARTBEAT_FILE
    stop = threading.Event()

    def beat(count: int) -> None:
        doc = {"run": run, "shard": k, "shards": n, "host": socket.gethostname(), "pid": os.getpid(),
               "beat": count}
        tmp = folder / (HEARTBEAT_FILE + ".tmp")
        try:
            tmp.write_text(json.dumps(doc), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:         # a full or flaky disk: the grading itself says so where it matters
            pass

    def loop() -> None:
        count = 1
        while not stop.wait(every):
            count += 1
            beat(count)

    beat(1)
    thread = threading.Thread(target=loop, name="shard-heartbeat", daemon=True)
    thread.start()
    done = False
    try:
        yield
        done = (folder / SHARD_FILE).is_file()
    finally:
        stop.set()
        thread.join(timeout=5)
        if done:
            path.unlink(missing_ok=True)


def read_heartbeat(folder: Path) -> dict | None:
    """A shard folder's heartbeat (its run, shard, beat), None when it has none (or not readable)."""
    try:
        doc = json.loads((folder / HEARTBEAT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


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
    d["mistakes"] = mistakes.from_json(d.get("mistakes"))
    names = {f.name for f in dataclasses.fields(Result)}
    return Result(**{k: v for k, v in d.items() if k in names})


def write_shard(folder: Path, asg: Assignment, results: list[Result], meta: RunMeta, k: int, n: int,
                everyone: list[inputs.Submission], rows: list[str], limits: dict[str, float],
                submissions: list[str], run: str = "") -> Path:
    """``folder/shard.json``, sealed, written last (through a temporary file): a shard folder without
    it is a shard that did not finish. ``run``: the run it belongs to (:func:`run_id`)."""
    prov = Provenance.of(asg, limits, meta["mode"])
    body = {"assignment": asg.name, "assignment_folder": str(asg.folder.resolve()), "shard": k, "shards": n,
            "run": run, "batch": fingerprint(everyone, asg, n), "rows": sorted(rows),
            "provenance": prov.to_json(),
            "submissions": [str(Path(s).resolve()) for s in submissions], "finished": time.time(),
            "meta": meta, "results": [result_to_json(r) for r in sorted(results, key=lambda r: r.file)]}
    doc = {"format": FORMAT, "seal": provenance.seal(provenance.key(folder.parent), body), "body": body}
    tmp = folder / (SHARD_FILE + ".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8", errors="surrogatepass")
    os.replace(tmp, folder / SHARD_FILE)
    (folder / FAILED_FILE).unlink(missing_ok=True)
    return folder / SHARD_FILE


def clear_shard(folder: Path) -> None:
    """Before a shard runs again: its earlier result (and failure) go first (a crash leaves no stale one)."""
    (folder / SHARD_FILE).unlink(missing_ok=True)
    (folder / FAILED_FILE).unlink(missing_ok=True)
