"""``python -m autograder``: the grading engine's command line.

    python -m autograder SUBMISSION... --assignment NN_name --out DIR [--workers N] [--timeout S]
                         [--memory GB] [--shard K/N] [--cache] ...

The command line turns argv into a :class:`autograder.config.GradeConfig` (:func:`config_from`) and
calls :func:`autograder.api.grade`, which grades the batch with student code sandboxed and writes
DIR. ``course grade`` (:mod:`instructor.grade`) takes the same options (:func:`parser`) and adds
the gradebook's. Exit code 0 when the batch finished, whatever the scores; 2 when the command line
or the assignment is wrong.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from . import api, shards
from .config import SANDBOX_MODES, GradeConfig, GradingError, Shard, default_workers


def parser(prog: str = "python -m autograder") -> argparse.ArgumentParser:
    """The grading engine's options; ``course grade`` (:mod:`instructor.grade`) adds the gradebook's."""
    p = argparse.ArgumentParser(prog=prog, description="Grade submissions of one assignment.")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION",
                   help=".ipynb files, folders of them, or .zip files (LMS bulk downloads)")
    p.add_argument("--assignment", required=True, help="NN_name (autograder/assignments/NN_name) or a folder")
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--workers", type=int, default=default_workers(),
                   help="submissions graded at once (default: cores, at most 4)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per submission (default 600)")
    p.add_argument("--cell-timeout", type=float, default=None,
                   help="seconds per cell and per test case (default: min(120, timeout))")
    p.add_argument("--memory", type=float, default=4.0, help="memory cap per submission in GB (default 4)")
    p.add_argument("--sandbox", choices=SANDBOX_MODES, default="auto",
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
    p.add_argument("--run-id", default=None, metavar="ID",
                   help="with --shard: the run this shard belongs to (default: $COURSE_RUN_ID, else "
                        "slurm-$SLURM_ARRAY_JOB_ID, else none); course merge takes one run's shards only")
    p.add_argument("--cache", action="store_true",
                   help="keep results in OUT/cache and re-run only what changed since: a notebook "
                        "with other bytes, or the tests of a changed question (says how many reused)")
    return p


def config_from(args: argparse.Namespace, p: argparse.ArgumentParser, **more) -> GradeConfig:
    """The engine's options parsed by :func:`parser` as a GradeConfig (``more``: the fields a caller
    adds, such as ``course grade``'s students' names); a bad value is a usage error (exit 2)."""
    try:
        shard = None if args.shard is None else Shard(*shards.parse(args.shard),
                                                      run=shards.run_id(args.run_id))
        return GradeConfig(
            submissions=tuple(Path(s) for s in args.submissions), assignment=args.assignment,
            out=args.out, workers=args.workers, timeout=args.timeout, cell_timeout=args.cell_timeout,
            memory=args.memory, sandbox=args.sandbox, scratch=args.scratch,
            progress=not args.no_progress, similarity=not args.no_similarity, shard=shard,
            cache=args.cache, **more)
    except (GradingError, shards.ShardError) as exc:
        p.error(str(exc))


def running(config: GradeConfig) -> contextlib.AbstractContextManager:
    """A shard's heartbeat while it grades (:func:`autograder.shards.heartbeat`); nothing otherwise."""
    shard = config.shard
    if shard is None:
        return contextlib.nullcontext()
    return shards.heartbeat(shards.shard_dir(config.out, shard.k, shard.n), shard.k, shard.n, shard.run)


def main(argv: list[str] | None = None) -> int:
    """``python -m autograder``: the engine alone (``course grade`` is this plus the LMS export);
    returns 0 when the batch finished (whatever the scores), 2 on bad input."""
    p = parser()
    config = config_from(p.parse_args(sys.argv[1:] if argv is None else argv), p)
    try:
        with running(config):
            outcome = api.grade(config)
    except GradingError as exc:
        print(f"course grade: {exc}", file=sys.stderr)
        return exc.exit_code
    api.say(outcome)
    api.warn(outcome)
    return 0


if __name__ == "__main__":
    sys.exit(main())
