"""The grading engine's API: :func:`grade` one batch, :func:`merge` the shards of one.

    from autograder.api import grade
    from autograder.config import GradeConfig
    outcome = grade(GradeConfig(submissions=(Path("subs"),), assignment="03_attention", out=Path("g")))

The grader (this process) never runs student code and never shares memory with it. It starts one
fork server (:mod:`autograder.runner`), hands it one submission per free worker slot, watches
every running submission in a single event loop (per-cell and per-submission wall-clock limits,
a cap on what it may send back, every message checked field by field), and when a submission's
cells have run, has the fork server start that submission's *judge* (:mod:`autograder.judge`),
which runs the tests here, on the grader's side, by sending the submission requests and judging
the answers. Only the judge's verdicts count; what the submission's process says about itself can
only cost it points. Each submission's processes run in a cgroup of their own where the machine
has them (:mod:`autograder.cgroups`); after each submission the grader kills everything it started,
removes its cgroup, clears its uid's key rings and deletes its scratch folder. It alone writes the
output folder. Before any notebook runs, :mod:`autograder.notebook_info` reads every notebook in a
process of its own: another week's notebook is not run at all, and the manual questions' answers
(with the figures their cells draw while they run, sent as checked messages) make the hand-grading
pages (:mod:`autograder.handgrading`). The machinery of one batch is :class:`autograder.batch.Grader`.

Every caller goes through here: the command lines (:mod:`autograder.grade`, ``course grade`` and
``course merge`` in :mod:`instructor.grade`), the Gradescope zip's runner, ``course nbgrader``, the
mutant and degenerate suites. A grading that cannot be done raises
:class:`autograder.config.GradingError` (its message says why; nothing is graded).
"""
from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import assignment as assignment_mod
from . import cache as cache_mod
from . import inputs, outdir, provenance, report, sandbox, shard_merge, shards, userns
from . import similarity as similarity_mod
from .batch import Grader, peak_memory_mb
from .config import GradeConfig, GradingError, ShardsMissing
from .results import NO_NAMES, Result, StudentNames
from .runmeta import RunMeta
from .workspace import begin_outputs, discard_outputs, set_aside, swap_outputs


@dataclass(frozen=True)
class Outcome:
    """A graded batch (or merged shards), its output folder written: ``out`` (a shard's own folder
    for a shard), its rows, the sandbox mode they ran in, whether cgroups held them (and the note
    that says how), ``meta`` as the report shows it, and ``notes``: what the grading has to say,
    one line each (the cache, the similarity flags, the summary, where the hand grading starts),
    printed by the command lines (:func:`say`); the engine prints nothing."""

    out: Path
    results: list[Result]
    mode: str
    cgroups: bool
    cg_note: str
    meta: RunMeta
    notes: tuple[str, ...] = ()


def say(outcome: Outcome) -> None:
    """The command lines' report of a grading: its notes, on stdout."""
    for line in outcome.notes:
        print(line)


def load_assignment(name_or_folder: str) -> assignment_mod.Assignment:
    try:
        return assignment_mod.load(name_or_folder)
    except assignment_mod.AssignmentError as exc:
        raise GradingError(str(exc)) from exc


Finish = Callable[["Outcome"], object]     # what follows a grading in OUT, before it is published


def grade(config: GradeConfig, finish: Finish | None = None) -> Outcome:
    """Grade the batch and write the output folder (:mod:`autograder.report`); the summary is in
    the Outcome's ``notes`` (:func:`say` prints them; ``finish`` is given them first).
    With ``config.shard``: grade that shard's rows only and write its shard result
    (:mod:`autograder.shards`) into ``config.out/shards/K-of-N``. With ``config.cache``: reuse what
    an earlier run graded and nothing changed for (:mod:`autograder.cache`). The batch is written
    into a staging folder inside ``config.out`` that replaces its outputs at the end
    (:func:`autograder.workspace.swap_outputs`): a run stopped half-way (Ctrl-C, out of memory, a
    time limit, kill -9) leaves the previous run's outputs as they were. ``finish``: what follows
    the grading in the output folder (the hand grades given back, the LMS files: see
    :func:`instructor.grade.after_grading`), done in the staging folder before the swap, so that
    OUT reads the old grading or the new one with all of it."""
    t0 = time.monotonic()
    asg = load_assignment(config.assignment)
    with _stopped_cleanly():
        return _grade_into_place(config, asg, t0, finish)


@contextlib.contextmanager
def _stopped_cleanly() -> Iterator[None]:
    """SIGTERM and SIGHUP (what `timeout`, Slurm, Kubernetes and a closed terminal send) stop the
    batch as Ctrl-C does, through its clean-up: the sandbox's processes killed, the folders' modes
    put back, the previous outputs kept. Only in the main thread, where Python runs handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _grade_into_place(config: GradeConfig, asg: assignment_mod.Assignment, t0: float,
                      finish: Finish | None = None) -> Outcome:
    shard = config.shard
    if shard is not None:           # the shard writes its own folder; config.out is the merge's
        out = shards.shard_dir(config.out, shard.k, shard.n)
        out.mkdir(parents=True, exist_ok=True)
        shards.clear_shard(out)
        return _grade(config, asg, out, None, t0)
    final = Path(config.out).resolve()
    staging = begin_outputs(final)
    try:
        return _grade(config, asg, staging, final, t0, finish)
    finally:                        # gone already when the outputs were swapped in
        discard_outputs(staging)


def _grade(config: GradeConfig, asg: assignment_mod.Assignment, out: Path, final: Path | None,
           t0: float, finish: Finish | None = None) -> Outcome:
    """:func:`grade` into ``out`` (a shard's folder, or the staging folder of ``final``)."""
    shard = config.shard
    try:                                     # a pod that asked for a user namespace and got none
        early = userns.enforce()
    except userns.UnsafePod as exc:
        raise GradingError(f"{exc}; not grading as the node's root with CAP_SYS_ADMIN") from exc
    grader = Grader(config, asg, out, early)
    assert config.cell_timeout is not None          # GradeConfig.__post_init__ sets it
    limits = {"timeout": config.timeout, "cell_timeout": config.cell_timeout, "memory": config.memory}
    startup = grading = 0.0
    try:
        staging = grader.make_root()
        skipped: list[inputs.Skipped] = []
        try:  # every notebook is streamed into the batch's private staging folder
            subs = inputs.collect([str(s) for s in config.submissions], staging, skipped)
        except inputs.InputError as exc:
            raise GradingError(str(exc)) from exc
        if not subs:
            raise GradingError("no notebooks found in " + " ".join(map(str, config.submissions))
                               + (f" ({inputs.entries_line(0, skipped)})" if skipped else ""))
        everyone = subs
        if shard is not None:      # the whole class was read: names, clashes and caps are the class's
            subs = shards.select(everyone, shard.k, shard.n)
        hashes = provenance.content_hashes(subs)    # before any notebook runs (and its staged copy goes)
        to_run, plan, cache = subs, None, None
        if config.cache:           # what an earlier run graded and nothing changed for
            grader.ws.prepare(subs)
            cache = cache_mod.Cache(config.out.resolve() / cache_mod.CACHE_DIR, asg,
                                    {**limits, "mode": grader.ws.mode})
            plan = cache.plan(subs, hashes, grader.ws.out)
            reused = {r.file for r in plan.reused}
            to_run = [s for s in subs if s.file not in reused]
            for s in subs:
                if s.file in reused and s.path is not None:
                    s.path.unlink(missing_ok=True)
        if to_run:
            grader.start(to_run, prepared=cache is not None, only=plan.partial if plan else None)
            startup = time.monotonic() - t0
            results = grader.run()
            grading = time.monotonic() - t0 - startup
        else:                      # an empty shard, or every row reused: nothing to run
            if cache is None:
                grader.ws.prepare(subs)
            startup = time.monotonic() - t0
            results = []
    finally:
        grader.close()
    for r in results:
        r.sha256 = hashes.get(r.file, "")
    ws = grader.ws
    notes: list[str] = []
    if cache is not None and plan is not None:
        results = [cache.splice(r, r.file, plan) if r.file in plan.partial else r for r in results]
        results = plan.reused + results
        cache.store(results, subs, ws.out)
        notes.append(plan.line(cache.folder))
    meta: RunMeta = {"workers": config.workers, "mode": ws.mode, "mode_note": sandbox.MODE_NOTES[ws.mode],
            "cgroups": ws.cg.kind if ws.cg else "none", "cgroups_note": ws.cg_note,
            "warnings": grader.warnings, "wall_seconds": time.monotonic() - t0,
            "startup_seconds": round(startup, 3), "grading_seconds": round(grading, 3),
            "grader_peak_memory_mb": peak_memory_mb(),
            "skipped": [{"name": s.name, "rule": s.rule} for s in skipped]}
    if plan is not None:
        meta["cache"] = {"reused": len(plan.reused), "partial": len(plan.partial), "fresh": plan.fresh}
    if final is None:
        notes.append(_write_shard(config, asg, ws.out, results, meta, everyone, subs, limits))
    else:
        meta["warnings"] += set_aside(final, dry_run=True)    # said in the report; done once it is written
        notes += write_outputs(ws.out, asg, results, meta, similar=config.similarity,
                               names=config.student_names, shown=final)
    outcome = Outcome(out=final or ws.out, results=results, mode=ws.mode, cg_note=ws.cg_note,
                      cgroups=ws.cg is not None, meta=meta, notes=tuple(notes))
    if final is not None:
        _publish(ws.out, final, outcome, finish)
    return outcome


def _publish(staging: Path, final: Path, outcome: Outcome, finish: Finish | None) -> None:
    """``finish`` done into the staging folder (read and written as ``final``'s grading), then the
    staging folder made ``final``'s in one step (:func:`autograder.outdir.publish`)."""
    if finish is not None:
        with outdir.staged(final, staging):
            finish(outcome)
    set_aside(final)                # what it says, the report said already (dry_run)
    swap_outputs(staging, final)


def _write_shard(config: GradeConfig, asg: assignment_mod.Assignment, out: Path, results: list[Result],
                 meta: RunMeta, everyone: list[inputs.Submission], subs: list[inputs.Submission],
                 limits: dict[str, float]) -> str:
    """A shard's result (:func:`autograder.shards.write_shard`), with where it ran and the gradebook
    the merge is for; returns its summary line."""
    assert config.shard is not None
    k, n = config.shard.k, config.shard.n
    meta["slurm"] = shards.slurm_context()
    meta["kubernetes"] = shards.kubernetes_context()
    if config.gradebook is not None:      # for the merge's LMS export
        meta["gradebook"] = [str(config.gradebook.path.resolve()), config.gradebook.column,
                             config.gradebook.export_partial]
    path = shards.write_shard(out, asg, results, meta, k, n, everyone, [s.file for s in subs],
                              limits, [str(s) for s in config.submissions], run=config.shard.run)
    ok = sum(1 for r in results if r.grading.ok)
    return (f"graded shard {k} of {n} ({len(results)} of {len(everyone)} rows) of {asg.name} in "
            f"{meta['wall_seconds']:.1f} s ({ok} ok, {len(results) - ok} not ok; sandbox: {meta['mode']}) "
            f"-> {path}; when every shard is done: course merge {config.out}")


def write_outputs(out: Path, asg: assignment_mod.Assignment, results: list[Result], meta: RunMeta, *,
                  similar: bool, names: StudentNames, shown: Path | None = None) -> list[str]:
    """Everything one grading writes into ``out``, and its summary (returned, one line each): one
    machine's batch and the merge of shards alike (``similar``: compare the submissions with each
    other; ``shown``: the folder the summary names, where ``out`` is a staging folder that will
    replace its outputs). report.html is written last, once, with the similarity section."""
    lines = []
    manual_notes = report.write_rows(out, asg, results, meta, names)
    section = None
    if similar:                  # flags for a person to look at: nothing in grades or feedback
        compared = similarity_mod.after_grading(out)
        section = compared.section
        lines.append(compared.line.replace(str(out), str(shown or out)))
    report.write_report(out, asg, results, meta, names, manual_notes=manual_notes, similarity_html=section)
    out = shown or out
    ok = sum(1 for r in results if r.grading.ok)
    how = f"{len(meta['shards'])} shards" if meta.get("shards") else f"{meta['wall_seconds']:.1f} s"
    lines.append(f"graded {len(results)} submissions of {asg.name} in {how} "
                 f"({ok} ok, {len(results) - ok} not ok; sandbox: {meta['mode']}) -> {out / 'grades.csv'}")
    lines.append(inputs.entries_line(len(results), meta.get("skipped", [])).replace(
        "report.html", str(out / "report.html")))
    if any(q.manual for q in asg.questions):
        lines.append(f"hand grading: open {out / 'manual'}/<question>.html, fill in "
                     f"{out / 'manual.csv'}, then: course manual {out} FILLED.csv")
    lines += ["note: " + line for line in manual_notes]
    return lines


def merge(*, out: Path, shard_dirs: Sequence[Path] = (), assignment: str | None = None, n: int | None = None,
          similarity: bool = True, student_names: StudentNames = NO_NAMES) -> Outcome:
    """``course merge OUT [SHARD_DIR...]``: the shards' results (default: every ``out/shards/*``, of
    ``n`` shards when given) into ``out``, written as one machine's batch writes them, once every row
    checked out against the files and the grader running now (:func:`load_merge`, then
    :func:`write_merge`). Nothing is written otherwise."""
    merged = load_merge(out=out, shard_dirs=shard_dirs, assignment=assignment, n=n)
    return write_merge(merged, out=out, similarity=similarity, student_names=student_names)


def load_merge(*, out: Path, shard_dirs: Sequence[Path] = (), assignment: str | None = None,
               n: int | None = None) -> shard_merge.Merged:
    """The shards of one batch, read and every row checked (:func:`autograder.shard_merge.load_shards`);
    nothing written. :class:`ShardsMissing` (exit 1) when a shard is missing or unfinished,
    :class:`GradingError` when one failed for good (exit 3) or the shards do not match the files or
    the grader (exit 2). ``meta["gradebook"]`` is the ``--gradebook`` the shards were graded with."""
    try:
        return shard_merge.load_shards(Path(out).resolve(), list(shard_dirs), assignment, n)
    except shards.ShardsMissing as exc:
        raise ShardsMissing(str(exc)) from exc
    except shards.ShardError as exc:
        error = GradingError(str(exc))
        error.exit_code = exc.exit_code
        raise error from exc


def write_merge(merged: shard_merge.Merged, *, out: Path, similarity: bool = True,
                student_names: StudentNames = NO_NAMES, finish: Finish | None = None) -> Outcome:
    """What :func:`load_merge` checked, written into ``out`` as one machine's batch writes it (through
    a staging folder, as :func:`grade`: a merge stopped half-way leaves ``out`` as it was; ``finish``
    as for :func:`grade`)."""
    t0 = time.monotonic()
    out = Path(out).resolve()
    asg, meta = merged.asg, merged.meta
    notes = ["note: " + line for line in merged.notes]
    meta["mode_note"] = sandbox.MODE_NOTES.get(meta["mode"], "")
    staging = begin_outputs(out)
    try:
        shard_merge.copy_figures(merged.shard_dirs, staging)
        meta["warnings"] += set_aside(out, dry_run=True)      # said in the report; done once it is written
        notes += write_outputs(staging, asg, merged.results, meta, similar=similarity, names=student_names,
                               shown=out)
        meta["merge_seconds"] = round(time.monotonic() - t0 + meta.get("merge_read_seconds", 0.0), 3)
        each = ", ".join(f"shard {m['shard']}: {m['rows']} rows, {m['mode']}" for m in meta["shards"])
        notes.append(f"merged {merged.n} shards ({each}) in {meta['merge_seconds']:.1f} s")
        outcome = Outcome(out=out, results=merged.results, mode=meta["mode"],
                          cg_note=meta.get("cgroups_note", ""), cgroups=meta.get("cgroups", "none") != "none",
                          meta=meta, notes=tuple(notes))
        _publish(staging, out, outcome, finish)
    finally:
        discard_outputs(staging)
    return outcome


def warn(outcome: Outcome) -> None:
    """The batch's last words, on stderr: a sandbox weaker than isolated, no cgroups."""
    if outcome.mode != "isolated":
        print("warning: " + sandbox.MODE_NOTES[outcome.mode], file=sys.stderr)
    if not outcome.cgroups:
        print("warning: " + outcome.cg_note, file=sys.stderr)
