"""The merge of shards: ``course merge OUT [SHARD_DIR...] [--shards N] [--run-id ID] [--wait]``.

Finds the shard folders of one run (:func:`choose`: only folders named exactly ``K-of-N`` whose
result says the same K and N; the set of the run asked for (``--run-id``, ``$COURSE_RUN_ID``), else
the only set there is: never chosen by the folders' clocks, so an older complete set is never merged
in place of this run's), waits for late ones (:func:`wait`: a started shard that stops without a
word, its heartbeat silent or its Slurm task gone from the queue, is taken as failed after
``--stale-after`` seconds), and uses their rows only when every row checks out against the files and
the grader now (:func:`check`: the seal, the grader's version, the assignment and each question's
tests, one set of limits, the class as it is now and every row's notebook bytes). ShardError (exit
2) names the rows that do not and the shards to grade again; ShardsMissing (1) and ShardFailed (3)
say which shard is not there. See :mod:`autograder.shards` for what a shard writes.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

from . import assignment as assignment_mod
from . import inputs, provenance
from .assignment import Assignment
from .provenance import Provenance
from .results import Result
from .runmeta import RunMeta, ShardRun
from .shards import (
    FAILED_FILE,
    FOLDER_NAME,
    FORMAT,
    MODE_ORDER,
    RUN_ENV,
    SHARD_FILE,
    SHARDS_DIR,
    ShardError,
    ShardFailed,
    ShardsMissing,
    assign,
    fingerprint,
    read_heartbeat,
    result_from_json,
    slurm_array,
)

SHOWN = 8                     # rows named per shard in a refusal
STALE_AFTER = 600.0           # seconds without a sign of life before --wait takes a shard as lost


@dataclasses.dataclass
class Found:
    """One shard folder as the merge finds it."""
    folder: Path
    k: int
    n: int
    body: dict | None = None       # the sealed body; None: unfinished, or not usable (``problem``)
    problem: str = ""
    failed: str = ""               # the exit code its last attempt failed with, when it failed for good
    run: str | None = None         # the run it belongs to (its result's, else its heartbeat's); None: unknown
    beat: dict | None = None       # its heartbeat, while it has no result


@dataclasses.dataclass
class Merged:
    asg: Assignment
    results: list[Result]
    meta: RunMeta
    shard_dirs: list[Path]
    n: int
    notes: list[str]


@dataclasses.dataclass
class Chosen:
    """The shard set of one run: its N, its run, its folders by K, notes on folders left aside, and
    the Ks without a usable result yet."""
    n: int
    run: str
    mine: dict[int, Found]
    notes: list[str]
    missing: list[int]
    foreign: list[str]             # folders of this N that hold another run's result


def find(out: Path, given: list[Path]) -> tuple[list[Path], list[str]]:
    """The shard folders (those given, else every ``out/shards/K-of-N`` folder) and a note on the
    folders under ``out/shards`` left aside because they are not named exactly ``K-of-N`` (a copy
    such as ``0-of-2.saved`` is never a shard of this run)."""
    if given:
        return [Path(g) for g in given], []
    base = out / SHARDS_DIR
    if not base.is_dir():
        return [], []
    folders = sorted(p for p in base.iterdir() if p.is_dir())
    odd = [p.name for p in folders if not FOLDER_NAME.match(p.name)]
    notes = [f"left aside {len(odd)} folders in {base} not named K-of-N ({', '.join(odd)})"] if odd else []
    return [p for p in folders if FOLDER_NAME.match(p.name)], notes


def read_folder(folder: Path) -> Found | None:
    """A shard folder's state; None when it is not a shard folder at all."""
    found = _read_folder(folder)
    if found is not None and found.body is None and not found.problem:
        beat = read_heartbeat(folder)
        if beat is not None and (beat.get("shard"), beat.get("shards")) == (found.k, found.n):
            found.beat, found.run = beat, str(beat.get("run") or "")
    return found


def _read_folder(folder: Path) -> Found | None:
    m = FOLDER_NAME.match(folder.name)
    path = folder / SHARD_FILE
    if not path.is_file():
        if m is None:
            return None
        failed = folder / FAILED_FILE
        code = failed.read_text(errors="replace").strip()[:40] if failed.is_file() else ""
        return Found(folder, int(m[1]), int(m[2]), failed=code or ("?" if failed.is_file() else ""))
    try:
        doc = json.loads(path.read_text(encoding="utf-8", errors="surrogatepass"))
    except (OSError, ValueError) as exc:
        return Found(folder, int(m[1]) if m else -1, int(m[2]) if m else -1, problem=f"not readable ({exc})")
    body = doc.get("body") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(body, dict):
        fmt = doc.get("format") if isinstance(doc, dict) else None
        return Found(folder, int(m[1]) if m else -1, int(m[2]) if m else -1,
                     problem=f"not a shard result of this grader (format {fmt!r}); grade it again")
    try:
        k, n = int(body["shard"]), int(body["shards"])
    except (KeyError, TypeError, ValueError):
        return Found(folder, -1, -1, problem="not a shard result (no shard number)")
    run = str(body.get("run") or "")
    if m is not None and (int(m[1]), int(m[2])) != (k, n):
        return Found(folder, int(m[1]), int(m[2]), run=run,
                     problem=f"holds the result of shard {k} of {n}, not of its folder's name (copied or "
                             "renamed)")
    if not provenance.verify(provenance.read_key(folder.parent), body, doc.get("seal")):
        return Found(folder, k, n, run=run,
                     problem=f"its seal does not match {folder.parent / provenance.KEY_FILE} "
                             "(changed since the shard wrote it, or another output folder's)")
    return Found(folder, k, n, body=body, run=run)


def run_name(run: str) -> str:
    return f"run {run}" if run else "the run without an id"


def pick(found: list[Found], n: int | None, run: str | None, given: bool) -> tuple[int, str]:
    """Which set to merge: (N, run). A set is the shards of one run (:func:`autograder.shards.run_id`),
    chosen by that identity, never by the folders' clocks (a node's clock can run ahead, and last
    week's complete set must not stand in for this week's unfinished one). ``run`` and ``n`` (the
    merge's ``--run-id`` and ``--shards``) narrow the choice; where more than one set is left, the
    merge refuses and names them."""
    if given:
        if len({f.n for f in found if f.n > 0}) > 1:
            raise ShardError("the shard folders given are of different N: "
                             + ", ".join(str(f.folder) for f in found) + "; name the shards of one N")
        if len({f.run for f in found if f.run is not None}) > 1:
            raise ShardError("the shard folders given are of different runs: " + ", ".join(
                f"{f.folder} ({run_name(f.run)})" for f in found if f.run is not None)
                + "; name the shards of one run")
    sets = sorted({(f.run, f.n) for f in found if f.run is not None and f.n > 0
                   and (run is None or f.run == run) and (n is None or f.n == n)})
    if len(sets) == 1:
        return sets[0][1], sets[0][0]
    if not sets:
        if n is not None:                  # none of it has started yet: all missing
            return n, run if run is not None else ""
        if run is not None:
            raise ShardsMissing(f"no shard of {run_name(run)} has started yet; nothing was written")
        raise ShardsMissing("no shard results yet; nothing was written")
    lines = []
    for r, m in sets:
        done = {f.k for f in found if f.n == m and f.run == r and f.body}
        gone = [k for k in range(m) if k not in done]
        lines.append(f"  {run_name(r)}, {m} shards: " + (f"missing {', '.join(map(str, gone))}" if gone
                                                         else "complete"))
    raise ShardError("the shard folders hold more than one set of shards; the merge does not guess which "
                     "is this run's (by the folders' times, an older set could pass for the newer):\n"
                     + "\n".join(lines) + "\nname one with --run-id ID (the shards' --run-id, "
                     "$COURSE_RUN_ID or slurm-ARRAYJOBID) and --shards N; nothing was written")


def choose(out: Path, given: list[Path], n: int | None = None, run: str | None = None) -> Chosen:
    """The shard set of one run (:func:`pick`) as it stands now: its folders, and the Ks missing."""
    paths, notes = find(out, given)
    found = [f for f in (read_folder(p) for p in paths) if f is not None]
    n, run = pick(found, n, run, bool(given))
    mine: dict[int, Found] = {}
    foreign = []
    for f in found:
        if f.n != n or not 0 <= f.k < n:
            continue
        if f.run is not None and f.run != run:
            foreign.append(f"{f.folder.name} ({run_name(f.run)})")
        elif f.k not in mine or mine[f.k].body is None:
            mine[f.k] = f
    others = sorted(f.folder.name for f in found if f.n != n)
    if others:
        notes.append(f"ignored {len(others)} shard folders of another N ({', '.join(others)}): merged "
                     f"the {n} shards of {run_name(run)}")
    have = {k for k, f in mine.items() if f.body is not None}
    return Chosen(n, run, mine, notes, [k for k in range(n) if k not in have], foreign)


def _pick_gradebook(bodies: list[dict]) -> tuple[list | None, str]:
    """The ``--gradebook`` (path, column) the shards of the set were graded with (None: none), and,
    when they disagree, the line that says how (the merge then takes none from them)."""
    books = [b["meta"].get("gradebook") or None for b in bodies]
    if all(book == books[0] for book in books):
        return books[0], ""
    return None, ("the shards were graded with different gradebooks: " + "; ".join(
        f"shard {b['shard']}: " + (f"{book[0]} column {book[1]!r}" if book else "none")
        for b, book in zip(bodies, books, strict=True)))


def current_class(paths: list[str]) -> tuple[list[inputs.Submission], dict[str, str]]:
    """The class as its files are now: the rows (read as a shard reads them) and their SHA-256."""
    missing = [p for p in paths if not Path(p).exists()]
    if missing or not paths:
        raise ShardError("cannot read the submissions the shards graded ("
                         + (", ".join(missing) or "none recorded") + "): the merge checks every row "
                         "against them; nothing was written")
    base = Path("/var/tmp" if os.path.isdir("/var/tmp") else tempfile.gettempdir())
    staging = Path(tempfile.mkdtemp(prefix="course-merge-", dir=base))
    try:
        subs = inputs.collect(paths, staging)
        return subs, provenance.content_hashes(subs)
    except inputs.InputError as exc:
        raise ShardError(f"cannot read the submissions the shards graded: {exc}; "
                         "nothing was written") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def named(rows: list[str]) -> str:
    more = f" and {len(rows) - SHOWN} more" if len(rows) > SHOWN else ""
    return ", ".join(rows[:SHOWN]) + more


def complete_set(out: Path, given: list[Path], n: int | None = None,
                 run: str | None = None) -> Chosen:
    """The set of one run (:func:`choose`) when every shard of it has finished; else ShardsMissing
    (not yet), ShardFailed (one failed for good) or ShardError."""
    chosen = choose(out, given, n, run)
    n, mine = chosen.n, chosen.mine
    failed = sorted(k for k, f in mine.items() if f.body is None and f.failed)
    if failed:
        raise ShardFailed("; ".join(f"shard {k} of {n} failed for good (its last attempt exited "
                                    f"{mine[k].failed}): grade it again (the same course grade command "
                                    f"with --shard {k}/{n})" for k in failed) + "; nothing was written")
    broken = [f for f in mine.values() if f.problem]
    if broken:
        raise ShardError("; ".join(f"{f.folder}: {f.problem}" for f in broken)
                         + f"; grade {'it' if len(broken) == 1 else 'them'} again; nothing was written")
    if chosen.missing:
        unfinished = [str(mine[k].folder) for k in chosen.missing if k in mine]
        extra = f" (unfinished: {', '.join(unfinished)})" if unfinished else ""
        extra += f" (holding another run's result: {', '.join(chosen.foreign)})" if chosen.foreign else ""
        extra += f" ({run_name(chosen.run)})" if chosen.run else ""
        raise ShardsMissing(f"missing {len(chosen.missing)} of {n} shards: "
                            f"{', '.join(map(str, chosen.missing))}{extra}; nothing was written")
    return chosen


def slurm_queued(array: str) -> set[int] | None:
    """The tasks of Slurm array job ``array`` still in the queue (pending, requeued, running); None
    when Slurm cannot be asked (then only the heartbeats tell)."""
    try:
        res = subprocess.run(["squeue", "-h", "-r", "-j", array, "-o", "%K"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if res.returncode != 0:            # a job Slurm has forgotten: none of its tasks is queued
        return set() if "Invalid job id" in res.stderr else None
    return {int(t) for t in res.stdout.split() if t.isdigit()}


def wait(out: Path, given: list[Path], n: int | None, poll: float, run: str | None = None,
         stale_after: float = STALE_AFTER) -> None:
    """Until every shard has finished (saying what it waits for when that changes); ShardFailed
    when one failed for good, or when one stopped without a word: a shard that has started (it
    has a heartbeat of this run) or whose Slurm array task is known, with no result and no sign of
    life (its heartbeat unchanged, its task not in Slurm's queue) for ``stale_after`` seconds of
    this merge's own clock. A shard that has not started yet (a pod not scheduled) is waited for."""
    last = ""
    start = time.monotonic()
    beats: dict[int, dict] = {}
    life: dict[int, float] = {}
    while True:
        try:
            complete_set(out, given, n, run)
            return
        except ShardsMissing as exc:
            if str(exc) != last:
                say(f"course merge: waiting: {exc}")
                last = str(exc)
        try:
            chosen = choose(out, given, n, run)
        except ShardsMissing:              # no shard of the run has started yet
            time.sleep(poll)
            continue
        now = time.monotonic()
        array = slurm_array(chosen.run)
        queued = slurm_queued(array) if array else None
        dead = []
        for k in chosen.missing:
            f = chosen.mine.get(k)
            beat = f.beat if f is not None and f.run == chosen.run else None
            if beat is not None and beats.get(k) != beat:
                beats[k], life[k] = beat, now
            if queued is not None and k in queued:
                life[k] = now
            if k in beats or queued is not None:
                if now - life.setdefault(k, start) >= stale_after:
                    dead.append(k)
        if dead:
            raise ShardFailed(stopped(chosen, dead, stale_after, array))
        time.sleep(poll)


def stopped(chosen: Chosen, dead: list[int], stale_after: float, array: str | None) -> str:
    """The sentence for shards that stopped without a word, with what to do."""
    n = chosen.n
    why = (f"no result, its heartbeat unchanged for {stale_after:g} s" if array is None else
           f"no result, no heartbeat for {stale_after:g} s and not in Slurm's queue")
    again = "; ".join(
        (f"scontrol requeue {array}_{k} (or sbatch --array={k} --export=ALL,{RUN_ENV}={chosen.run} "
         f"grade.sbatch), then the merge again" if array is not None else
         f"grade it again (the same course grade command with --shard {k}/{n}"
         + (f" --run-id {chosen.run}" if chosen.run else "") + "), then merge again")
        for k in dead)
    which = ", ".join(map(str, dead))
    return (f"shard{'s' if len(dead) > 1 else ''} {which} of {n} of {run_name(chosen.run)} "
            f"stopped without a word ({why}: killed, its node lost or its pod evicted): {again}; "
            "nothing was written")


def load_shards(out: Path, given: list[Path], assignment: str | None = None, n: int | None = None,
                run: str | None = None) -> Merged:
    """Every shard of one batch, read and checked against the files and the grader now; ShardError
    (ShardsMissing, ShardFailed) says what is wrong or missing and which shards to grade again."""
    t0 = time.monotonic()
    chosen = complete_set(out, given, n, run)
    n, mine, notes = chosen.n, chosen.mine, chosen.notes
    bodies = cast("list[dict]", [mine[k].body for k in range(n)])     # complete_set: every one there
    asg = _assignment(assignment or bodies[0]["assignment_folder"])
    by_k = check(bodies, asg, n)
    meta = _meta(bodies, by_k, time.monotonic() - t0)
    results = sorted((r for rows in by_k.values() for r in rows), key=lambda r: r.file)
    return Merged(asg=asg, results=results, meta=meta, shard_dirs=[mine[k].folder for k in range(n)], n=n,
                  notes=notes)


def _assignment(name: str) -> Assignment:
    try:
        return assignment_mod.load(name)
    except assignment_mod.AssignmentError as exc:
        raise ShardError(str(exc)) from None


def check(bodies: list[dict], asg: Assignment, n: int) -> dict[int, list[Result]]:
    """Every row against the files, the assignment and the grader now; the rows by shard, or
    ShardError naming every row that does not match and the shards to grade again."""
    by_k = {b["shard"]: [result_from_json(r) for r in b["results"]] for b in bodies}
    problems = [f"shard {b['shard']} holds {len(by_k[b['shard']])} rows of its {len(b['rows'])}: "
                f"grade shard {b['shard']} again"
                for b in bodies if sorted(r.file for r in by_k[b["shard"]]) != sorted(b["rows"])]
    problems += _check_provenance(bodies, asg)
    paths = bodies[0]["submissions"]
    if any(b["submissions"] != paths for b in bodies):
        problems.append("the shards graded different submissions: " + "; ".join(
            f"shard {b['shard']}: {' '.join(b['submissions'])}" for b in bodies))
    elif not problems:
        problems += _check_files(bodies, by_k, asg, n)
    if problems:
        raise ShardError("the shard results do not match the files and the grader now; nothing was written:\n"
                         + "\n".join("  " + p for p in problems))
    files = [r.file for rows in by_k.values() for r in rows]
    if len(set(files)) != len(files):
        raise ShardError("two shards hold the same row: the shard results are not of one batch")
    return by_k


def _check_provenance(bodies: list[dict], asg: Assignment) -> list[str]:
    """Each shard's grader version and tests against this grader's and the assignment's now; one
    set of limits for all (the sandbox modes may differ: the report names the weakest)."""
    problems = []
    first = Provenance.from_json(bodies[0]["provenance"])
    now = Provenance.of(asg, first.limits, first.mode)
    for body in bodies:
        k, prov = body["shard"], Provenance.from_json(body["provenance"])
        differs = [d for d in prov.differences(now, with_mode=False) if not d.startswith("limits ")]
        if differs:
            problems.append(f"shard {k} ({named(body['rows'])}) was graded with {'; '.join(differs)}: "
                            f"grade shard {k} again")
        if prov.limits != first.limits:
            problems.append(f"shard {k} was graded with limits {provenance.limits_text(prov.limits)}, "
                            f"shard {bodies[0]['shard']} with {provenance.limits_text(first.limits)}: "
                            "grade every shard with the same limits")
    return problems


def _check_files(bodies: list[dict], by_k: dict[int, list[Result]], asg: Assignment, n: int) -> list[str]:
    """The class as it is now (its rows and split) and every row's notebook bytes."""
    everyone, hashes = current_class(bodies[0]["submissions"])
    batch = fingerprint(everyone, asg, n)
    stale = [b["shard"] for b in bodies if b["batch"] != batch]
    if stale:
        rows_then = {f for b in bodies for f in b["rows"]}
        rows_now = {s.file for s in everyone}
        new, gone = sorted(rows_now - rows_then), sorted(rows_then - rows_now)
        what = "; ".join(x for x in (f"new rows: {named(new)}" if new else "",
                                     f"rows gone: {named(gone)}" if gone else "") if x)
        return [f"the class changed since shards {', '.join(map(str, stale))} were graded "
                f"({what or 'its rows, their split or the tests'}): grade every shard again "
                "(the split depends on the whole class)"]
    problems = []
    where = assign(everyone, n)
    for k, rows in sorted(by_k.items()):
        moved = [f"{r.file} (graded {r.sha256[:12] or 'none'}, the file's now "
                 f"{hashes.get(r.file, '')[:12] or 'none'})"
                 for r in rows if r.sha256 != hashes.get(r.file, "")]
        if moved:
            problems.append(f"uploaded again after shard {k} graded {'it' if len(moved) == 1 else 'them'}: "
                            f"{named(moved)}: grade shard {k} again (the same course grade command with "
                            f"--shard {k}/{n})")
        wrong = [f"{r.file} ({why})" for r in rows if (why := provenance.implausible(r, asg))]
        wrong += [f"{r.file} (of shard {where.get(r.file)})" for r in rows if where.get(r.file) != k]
        if wrong:
            problems.append(f"shard {k} holds rows that cannot be right: {named(wrong)}: "
                            f"grade shard {k} again")
    return problems


def _meta(bodies: list[dict], by_k: dict[int, list[Result]], read_seconds: float) -> RunMeta:
    modes: dict[int, str] = {}
    warnings: list[str] = []
    walls: list[float] = []
    shard_meta: list[ShardRun] = []
    for body in bodies:
        k, m = body["shard"], body["meta"]
        modes[k] = m.get("mode", "weak")
        walls.append(float(m.get("wall_seconds", 0.0)))
        for w in m.get("warnings", []):
            if w not in warnings:
                warnings.append(w)
        shard_meta.append({"shard": k, "rows": len(by_k[k]), "mode": modes[k],
                           "wall_seconds": round(walls[-1], 3), "startup_seconds": m.get("startup_seconds"),
                           "slurm": m.get("slurm", {}), "kubernetes": m.get("kubernetes", {})})
    weakest = max(modes.values(), key=lambda m: MODE_ORDER.index(m) if m in MODE_ORDER else len(MODE_ORDER))
    if len(set(modes.values())) > 1:
        warnings.insert(0, "the shards ran in different sandbox modes: " + ", ".join(
            f"shard {k} {m}" for k, m in sorted(modes.items())) + f"; the report names the weakest "
            f"({weakest})")
    first = bodies[0]["meta"]
    book, conflict = _pick_gradebook(bodies)
    meta: RunMeta = {
        "workers": first.get("workers"), "mode": weakest, "cgroups": first.get("cgroups", "none"),
        "cgroups_note": first.get("cgroups_note", ""), "warnings": warnings,
        "wall_seconds": max(walls), "grader_peak_memory_mb": first.get("grader_peak_memory_mb"),
        "shards": shard_meta, "merge_read_seconds": round(read_seconds, 3),
        "skipped": first.get("skipped", [])}   # every shard read the whole class: the same skips
    if book:
        meta["gradebook"] = book
    if conflict:
        meta["gradebook_conflict"] = conflict
    return meta


def copy_figures(shard_dirs: list[Path], out: Path) -> None:
    """The figures the shards' rows drew, into ``out/figures`` (the rows name them relative to it)."""
    for f in shard_dirs:
        src = f / "figures"
        if src.is_dir():
            shutil.copytree(src, out / "figures", dirs_exist_ok=True)


def say(line: str) -> None:
    print(line, file=sys.stderr)
