"""``course grade``: grade a whole class on one machine, in parallel, with student code sandboxed.

    course grade SUBMISSION... --assignment NN_name --out DIR [--workers N] [--timeout S] [--memory GB]

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
pages (:mod:`autograder.handgrading`). ``course grade`` (:mod:`instructor.grade`) is :func:`run` with
the LMS export after it; ``python -m autograder`` is :func:`main`, the engine alone. Exit code 0 when
the batch finished, whatever the scores; 2 when the command line or the assignment is wrong.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import assignment as assignment_mod
from . import cache as cache_mod
from . import inputs, provenance, report, sandbox, shard_merge, shards, similarity, userns
from .results import Result
from .scheduler import Scheduler
from .survey import Survey
from .workspace import Workspace


def parser(prog: str = "python -m autograder") -> argparse.ArgumentParser:
    """The grading engine's options; ``course grade`` (:mod:`instructor.grade`) adds the gradebook's."""
    p = argparse.ArgumentParser(prog=prog, description="Grade submissions of one assignment.")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION",
                   help=".ipynb files, folders of them, or .zip files (LMS bulk downloads)")
    p.add_argument("--assignment", required=True, help="NN_name (autograder/assignments/NN_name) or a folder")
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                   help="submissions graded at once (default: cores, at most 4)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per submission (default 600)")
    p.add_argument("--cell-timeout", type=float, default=None,
                   help="seconds per cell and per test case (default: min(120, timeout))")
    p.add_argument("--memory", type=float, default=4.0, help="memory cap per submission in GB (default 4)")
    p.add_argument("--sandbox", choices=["auto", "isolated", "user", "weak"], default="auto",
                   help="isolation mode (default: the strongest this machine allows)")
    p.add_argument("--scratch", type=Path, default=None,
                   help="where scratch folders go (default: a new folder in /var/tmp)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-similarity", action="store_true",
                   help="do not compare the submissions with each other "
                        "(course similarity DIR does it later)")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="grade only shard K of N (K from 0; a student's rows stay together) into "
                        "OUT/shards/K-of-N; `course merge OUT` combines the shards")
    p.add_argument("--cache", action="store_true",
                   help="keep results in OUT/cache and re-run only what changed since: a notebook "
                        "with other bytes, or the tests of a changed question (says how many reused)")
    return p


def parse_args(argv: list[str], p: argparse.ArgumentParser | None = None) -> argparse.Namespace:
    p = p or parser()
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be at least 1")
    if args.cell_timeout is None:
        args.cell_timeout = min(120.0, args.timeout)
    if args.shard is not None:
        try:
            args.shard = shards.parse(args.shard)
        except shards.ShardError as exc:
            p.error(str(exc))
    return args


class Grader:
    """One batch: its place on this machine (:mod:`autograder.workspace`), what was read in its
    notebooks before they run (:mod:`autograder.survey`), and the processes that run them
    (:mod:`autograder.scheduler`, which reads their messages with :mod:`autograder.intake` and
    assembles each row with :mod:`autograder.verdict`)."""

    def __init__(self, args: argparse.Namespace, asg: assignment_mod.Assignment) -> None:
        self.args = args
        self.asg = asg
        self.warnings: list[str] = []
        self.ws = Workspace(args, asg, self.warnings)
        self.survey: Survey | None = None
        self.scheduler: Scheduler | None = None

    def make_root(self) -> Path:
        """The batch's private folder; returns its staging folder (where the submissions go)."""
        self.ws.make_root()
        return self.ws.staging

    def setup(self, subs: list[inputs.Submission], prepared: bool = False) -> None:
        self.subs = subs
        if not prepared:
            self.ws.prepare(subs)
        self.survey = Survey(self.asg, subs, self.ws.root, self.ws.staging, self.ws.out, self.warnings)
        self.scheduler = Scheduler(self.args, self.asg, self.ws, self.survey)
        self.survey.start()                 # reads the notebooks while the fork server starts
        self.scheduler.start()
        self.survey.collect()

    def run(self) -> list[Result]:
        return self.scheduler.run(self.subs)

    def close(self) -> None:
        if self.survey is not None:
            self.survey.kill()
        if self.scheduler is not None:
            self.scheduler.close()
        self.ws.close()


def peak_memory_mb() -> float:
    """This process's peak resident memory (VmHWM: ru_maxrss would include what the parent held
    before it exec'ed us)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


@dataclass
class Outcome:
    """A graded batch, its output folder written."""
    out: Path
    results: list[Result]
    mode: str
    cg_note: str
    cgroups: bool
    meta: dict


def run(args: argparse.Namespace, asg: assignment_mod.Assignment) -> Outcome | int:
    """Grade the batch and write the output folder (:mod:`autograder.report`); print the summary.
    With ``--shard K/N``: grade shard K's rows only and write its shard result
    (:mod:`autograder.shards`). An int (2) when the submissions cannot be read."""
    t0 = time.monotonic()
    shard = getattr(args, "shard", None)
    if shard is not None:           # the shard writes its own folder; OUT is the merge's
        args.final_out = args.out
        args.out = shards.shard_dir(args.out, *shard)
        args.out.mkdir(parents=True, exist_ok=True)
        shards.clear_shard(args.out)
    grader = Grader(args, asg)
    try:                                     # a pod that asked for a user namespace and got none
        grader.warnings += userns.enforce()
    except userns.UnsafePod as exc:
        print(f"course grade: {exc}; not grading as the node's root with CAP_SYS_ADMIN", file=sys.stderr)
        return 2
    limits = {"timeout": args.timeout, "cell_timeout": args.cell_timeout, "memory": args.memory}
    startup = 0.0
    try:
        staging = grader.make_root()
        try:  # every notebook is streamed into the batch's private staging folder
            subs = inputs.collect(args.submissions, staging)
        except inputs.InputError as exc:
            print(f"course grade: {exc}", file=sys.stderr)
            return 2
        if not subs:
            print("course grade: no notebooks found in " + " ".join(args.submissions), file=sys.stderr)
            return 2
        everyone = subs
        if shard is not None:      # the whole class was read: names, clashes and caps are the class's
            subs = shards.select(everyone, *shard)
        hashes = provenance.content_hashes(subs)    # before any notebook runs (and its staged copy goes)
        to_run, plan, cache = subs, None, None
        if getattr(args, "cache", False):     # what an earlier run graded and nothing changed for
            grader.ws.prepare(subs)
            folder = Path(getattr(args, "final_out", args.out)).resolve() / cache_mod.CACHE_DIR
            cache = cache_mod.Cache(folder, asg, {**limits, "mode": grader.ws.mode})
            plan = cache.plan(subs, hashes, grader.ws.out)
            reused = {r.file for r in plan.reused}
            to_run = [s for s in subs if s.file not in reused]
            for s in subs:
                if s.file in reused and s.path is not None:
                    s.path.unlink(missing_ok=True)
        if to_run:
            grader.setup(to_run, prepared=cache is not None)
            if plan is not None:
                grader.scheduler.only = plan.partial
            startup = time.monotonic() - t0
            results = grader.run()
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
    if cache is not None and plan is not None:
        results = [cache.splice(r, r.file, plan) if r.file in plan.partial else r for r in results]
        results = plan.reused + results
        cache.store(results, subs, ws.out)
        print(plan.line(cache.folder))
    meta = {"workers": args.workers, "mode": ws.mode, "mode_note": sandbox.MODE_NOTES[ws.mode],
            "cgroups": ws.cg.kind if ws.cg else "none", "cgroups_note": ws.cg_note,
            "warnings": grader.warnings, "wall_seconds": time.monotonic() - t0,
            "startup_seconds": round(startup, 3), "grader_peak_memory_mb": peak_memory_mb()}
    if plan is not None:
        meta["cache"] = {"reused": len(plan.reused), "partial": len(plan.partial), "fresh": plan.fresh}
    if shard is not None:
        k, n = shard
        meta["slurm"] = shards.slurm_context()
        meta["kubernetes"] = shards.kubernetes_context()
        if getattr(args, "gradebook", None) is not None:     # for the merge's LMS export
            meta["gradebook"] = [str(args.gradebook.resolve()), args.gradebook_column]
        path = shards.write_shard(ws.out, asg, results, meta, k, n, everyone, [s.file for s in subs],
                                  limits, args.submissions)
        ok = sum(1 for r in results if r.status == "ok")
        print(f"graded shard {k} of {n} ({len(results)} of {len(everyone)} rows) of {asg.name} in "
              f"{meta['wall_seconds']:.1f} s ({ok} ok, {len(results) - ok} not ok; sandbox: {ws.mode}) "
              f"-> {path}; when every shard is done: course merge {args.final_out}")
    else:
        write_outputs(ws.out, asg, results, meta, args.no_similarity)
    return Outcome(out=ws.out, results=results, mode=ws.mode, cg_note=ws.cg_note,
                   cgroups=ws.cg is not None, meta=meta)


def write_outputs(out: Path, asg: assignment_mod.Assignment, results: list[Result], meta: dict,
                  no_similarity: bool) -> None:
    """Everything one grading writes into ``out``, and its summary: one machine's batch and the
    merge of shards alike."""
    report.write_all(out, asg, results, meta)
    if not no_similarity:        # flags for a person to look at: nothing in grades or feedback
        print(similarity.after_grading(out))
    ok = sum(1 for r in results if r.status == "ok")
    how = f"{len(meta['shards'])} shards" if meta.get("shards") else f"{meta['wall_seconds']:.1f} s"
    print(f"graded {len(results)} submissions of {asg.name} in {how} "
          f"({ok} ok, {len(results) - ok} not ok; sandbox: {meta['mode']}) -> {out / 'grades.csv'}")
    if any(q.manual for q in asg.questions):
        print(f"hand grading: open {out / 'manual'}/<question>.html, fill in "
              f"{out / 'manual.csv'}, then: course manual {out} FILLED.csv")
    for line in meta.get("manual_notes", []):
        print("note: " + line)


def merge(out: Path, shard_dirs: list[Path], assignment: str | None,
          no_similarity: bool, n: int | None = None) -> Outcome | int:
    """``course merge OUT [SHARD_DIR...]``: the shards' results into OUT, written as one machine's
    batch writes them, once every row checked out (:func:`autograder.shard_merge.load_shards`). Nothing
    is written otherwise: 1 when a shard is missing, 3 when one failed for good, 2 when the shards
    do not match the files or the grader."""
    t0 = time.monotonic()
    out = out.resolve()
    try:
        merged = shard_merge.load_shards(out, shard_dirs, assignment, n)
    except shards.ShardError as exc:
        print(f"course merge: {exc}", file=sys.stderr)
        return exc.exit_code
    asg, meta = merged.asg, merged.meta
    for line in merged.notes:
        print("note: " + line)
    meta["mode_note"] = sandbox.MODE_NOTES.get(meta["mode"], "")
    warnings: list[str] = []
    from .workspace import clear_outputs
    clear_outputs(out, warnings)
    meta["warnings"] += warnings
    shard_merge.copy_figures(merged.shard_dirs, out)
    write_outputs(out, asg, merged.results, meta, no_similarity)
    meta["merge_seconds"] = round(time.monotonic() - t0, 3)
    each = ", ".join(f"shard {m['shard']}: {m['rows']} rows, {m['mode']}" for m in meta["shards"])
    print(f"merged {merged.n} shards ({each}) in {meta['merge_seconds']:.1f} s")
    return Outcome(out=out, results=merged.results, mode=meta["mode"], cg_note=meta.get("cgroups_note", ""),
                   cgroups=meta.get("cgroups", "none") != "none", meta=meta)


def warn(outcome: Outcome) -> None:
    """The batch's last words, on stderr: a sandbox weaker than isolated, no cgroups."""
    if outcome.mode != "isolated":
        print("warning: " + sandbox.MODE_NOTES[outcome.mode], file=sys.stderr)
    if not outcome.cgroups:
        print("warning: " + outcome.cg_note, file=sys.stderr)


def load(args: argparse.Namespace) -> assignment_mod.Assignment | None:
    try:
        return assignment_mod.load(args.assignment)
    except assignment_mod.AssignmentError as exc:
        print(f"course grade: {exc}", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> int:
    """``python -m autograder``: the engine alone (``course grade`` is this plus the LMS export);
    returns 0 when the batch finished (whatever the scores), 2 on bad input."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    asg = load(args)
    if asg is None:
        return 2
    outcome = run(args, asg)
    if isinstance(outcome, int):
        return outcome
    warn(outcome)
    return 0


if __name__ == "__main__":
    sys.exit(main())
