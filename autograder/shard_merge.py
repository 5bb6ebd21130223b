"""The merge of shards: ``course merge OUT [SHARD_DIR...] [--shards N] [--wait]``.

Finds the shard folders of one batch (:func:`complete_set`: the set of N asked for, else the set
started last, when it is complete; folders of another N left aside with a note; an older complete
set is never merged in place of an unfinished newer one), waits for late ones (:func:`wait`),
and uses their rows only when every row checks out against the files and the grader now
(:func:`check`: the seal, the grader's version, the assignment and each question's tests, one set
of limits, the class as it is now and every row's notebook bytes). ShardError (exit 2) names the
rows that do not and the shards to grade again; ShardsMissing (1) and ShardFailed (3) say which
shard is not there. See :mod:`autograder.shards` for what a shard writes.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from . import assignment as assignment_mod
from . import inputs, provenance
from .assignment import Assignment
from .provenance import Provenance
from .results import Result
from .shards import (
    FAILED_FILE,
    FOLDER_NAME,
    FORMAT,
    MODE_ORDER,
    SHARD_FILE,
    SHARDS_DIR,
    ShardError,
    ShardFailed,
    ShardsMissing,
    assign,
    fingerprint,
    result_from_json,
)

SHOWN = 8                     # rows named per shard in a refusal


@dataclasses.dataclass
class Found:
    """One shard folder as the merge finds it."""
    folder: Path
    k: int
    n: int
    body: dict | None = None       # the sealed body; None: unfinished, or not usable (``problem``)
    problem: str = ""
    failed: str = ""               # the exit code its last attempt failed with, when it failed for good
    when: float = 0.0              # when the shard last started or finished (folder mtime, ``finished``)


@dataclasses.dataclass
class Merged:
    asg: Assignment
    results: list[Result]
    meta: dict
    shard_dirs: list[Path]
    n: int
    notes: list[str]


def find(out: Path, given: list[Path]) -> list[Path]:
    """The shard folders: those given, else every ``out/shards/*`` folder."""
    if given:
        return [Path(g) for g in given]
    base = out / SHARDS_DIR
    return sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def read_folder(folder: Path) -> Found | None:
    """A shard folder's state; None when it is not a shard folder at all."""
    found = _read_folder(folder)
    if found is not None:
        try:                       # a shard clears (or makes) its folder when it starts
            found.when = folder.stat().st_mtime
        except OSError:
            pass
        if found.body is not None:
            found.when = max(found.when, float(found.body.get("finished", 0) or 0))
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
    if not provenance.verify(provenance.read_key(folder.parent), body, doc.get("seal")):
        return Found(folder, k, n, problem=f"its seal does not match {folder.parent / provenance.KEY_FILE} "
                                            "(changed since the shard wrote it, or another output folder's)")
    return Found(folder, k, n, body=body)


def pick(found: list[Found], n: int | None, given: bool) -> tuple[int, list[str]]:
    """Which N to merge, and notes on the folders of other Ns left aside. Without ``n``: the set
    started (or finished) last is the batch's own; when it is not complete, an older complete set is
    last week's run (other limits, another gradebook), never merged in its place: ShardsMissing
    names both (``--shards N`` merges one on purpose)."""
    ns = sorted({f.n for f in found if f.n > 0})
    if n is None:
        complete = [m for m in ns if {f.k for f in found if f.n == m and f.body} >= set(range(m))]
        newest = max(ns, key=lambda m: max((f.when, float((f.body or {}).get("finished", 0) or 0))
                                           for f in found if f.n == m)) if ns else None
        if len(ns) == 1:
            n = ns[0]
        elif given and ns:
            raise ShardError("the shard folders given are of different N: "
                             + ", ".join(str(f.folder) for f in found) + "; name the shards of one N")
        elif newest in complete:
            n = newest
        elif complete:
            older = ", ".join(f"{m} ({', '.join(sorted(f.folder.name for f in found if f.n == m))})"
                              for m in complete)
            raise ShardsMissing(f"the shards started last, of {newest}, are not all done: missing "
                                f"{', '.join(map(str, missing_of(found, newest)))}; the complete set of "
                                f"{older} is older (an earlier run, maybe with other limits or gradebook) "
                                f"and is not merged in its place: wait for the shards of {newest} (course "
                                f"merge --wait), or merge the older set on purpose with --shards N; "
                                "nothing was written")
        elif ns:
            lines = [f"  of {m}: missing {', '.join(map(str, missing_of(found, m)))}" for m in ns]
            raise ShardsMissing("no complete set of shards (course merge --shards N picks one):\n"
                                + "\n".join(lines) + "\nnothing was written")
    if n is None:
        raise ShardsMissing("no shard results yet; nothing was written")
    others = sorted({f.folder.name for f in found if f.n != n})
    notes = [f"ignored {len(others)} shard folders of another N ({', '.join(others)}): the {n} shards "
             f"of this batch are complete"] if others else []
    return n, notes


def _pick_gradebook(bodies: list[dict]) -> tuple[list | None, str]:
    """The ``--gradebook`` (path, column) the shards of the set were graded with (None: none), and,
    when they disagree, the line that says how (the merge then takes none from them)."""
    books = [b["meta"].get("gradebook") or None for b in bodies]
    if all(book == books[0] for book in books):
        return books[0], ""
    return None, ("the shards were graded with different gradebooks: " + "; ".join(
        f"shard {b['shard']}: " + (f"{book[0]} column {book[1]!r}" if book else "none")
        for b, book in zip(bodies, books, strict=True)))


def missing_of(found: list[Found], n: int) -> list[int]:
    have = {f.k for f in found if f.n == n and f.body is not None}
    return [k for k in range(n) if k not in have]


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


def complete_set(out: Path, given: list[Path],
                 n: int | None = None) -> tuple[int, dict[int, Found], list[str]]:
    """(N, {K: its folder}, notes on folders left aside) when every shard of one batch has finished;
    else ShardsMissing (not yet), ShardFailed (one failed for good) or ShardError."""
    found = [f for f in (read_folder(p) for p in find(out, given)) if f is not None]
    n, notes = pick(found, n, bool(given))
    mine: dict[int, Found] = {}
    for f in found:
        if f.n == n and (f.k not in mine or mine[f.k].body is None):
            mine[f.k] = f
    failed = sorted(k for k, f in mine.items() if f.body is None and f.failed)
    if failed:
        raise ShardFailed("; ".join(f"shard {k} of {n} failed for good (its last attempt exited "
                                    f"{mine[k].failed}): grade it again (the same course grade command "
                                    f"with --shard {k}/{n})" for k in failed) + "; nothing was written")
    broken = [f for f in mine.values() if f.problem]
    if broken:
        raise ShardError("; ".join(f"{f.folder}: {f.problem}" for f in broken)
                         + f"; grade {'it' if len(broken) == 1 else 'them'} again; nothing was written")
    missing = missing_of(found, n)
    if missing:
        unfinished = [str(mine[k].folder) for k in missing if k in mine]
        extra = f" (unfinished: {', '.join(unfinished)})" if unfinished else ""
        raise ShardsMissing(f"missing {len(missing)} of {n} shards: {', '.join(map(str, missing))}{extra}; "
                            f"nothing was written")
    return n, mine, notes


def wait(out: Path, given: list[Path], n: int | None, poll: float) -> None:
    """Until every shard has finished (saying what it waits for when that changes); ShardFailed
    when one failed for good, ShardError when they cannot be merged."""
    last = ""
    while True:
        try:
            complete_set(out, given, n)
            return
        except ShardsMissing as exc:
            if str(exc) != last:
                say(f"course merge: waiting: {exc}")
                last = str(exc)
        time.sleep(poll)


def load_shards(out: Path, given: list[Path], assignment: str | None = None, n: int | None = None) -> Merged:
    """Every shard of one batch, read and checked against the files and the grader now; ShardError
    (ShardsMissing, ShardFailed) says what is wrong or missing and which shards to grade again."""
    t0 = time.monotonic()
    n, mine, notes = complete_set(out, given, n)
    bodies = [mine[k].body for k in range(n)]
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


def _meta(bodies: list[dict], by_k: dict[int, list[Result]], read_seconds: float) -> dict:
    modes: dict[int, str] = {}
    warnings: list[str] = []
    walls, shard_meta = [], []
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
    meta = {"workers": first.get("workers"), "mode": weakest, "cgroups": first.get("cgroups", "none"),
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
