"""``course grade``: the grading engine (:func:`autograder.api.grade`) with the LMS export after it.

    course grade SUBMISSION... --assignment NN_name --out DIR [--workers N] [--timeout S] [--memory GB]
                 [--gradebook CANVAS.csv [--gradebook-column TEXT]]

Everything but ``--gradebook`` is the engine's (``python -m autograder`` takes the same options,
:mod:`autograder.grade` makes them a GradeConfig; :func:`grade_class` is the command without argv).
With ``--gradebook``, the gradebook is checked before grading (a wrong one is a usage error, not a
surprise after an hour of grading) and DIR/canvas_import.csv (or moodle_import.csv) is written after
it (:mod:`instructor.lms`); the gradebook and column are kept in DIR/lms.json for ``course manual``.
Into a folder that holds hand grades (DIR/hand_grades.sqlite, :mod:`instructor.ledger`), every hand
grade is given back to the row with the same notebook content after grading (before the export), and
those whose notebook changed are listed, kept in the ledger; manual.csv is then written again with
the hand grades that were given back. The students' feedback goes back through the LMS too
(:mod:`instructor.handback`: DIR/canvas_feedback.zip, Moodle's "Feedback comments"), and the report
names the students as the gradebook does. Exit code 0 when the batch finished,
whatever the scores; 2 when the command line, the assignment or the gradebook is wrong.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path

from autograder import api, shard_merge, shards
from autograder import grade as engine
from autograder.config import Gradebook, GradeConfig, GradingError
from autograder.results import NO_NAMES, StudentNames

from . import handback, lms, manual


def parser() -> argparse.ArgumentParser:
    p = engine.parser("course grade")
    p.add_argument("--gradebook", type=Path, default=None,
                   help="the gradebook CSV downloaded from Canvas (or Moodle's grading worksheet): "
                        "also write DIR/canvas_import.csv (moodle_import.csv) with this assignment's "
                        "column filled, to import back")
    p.add_argument("--gradebook-column", default=None, metavar="TEXT",
                   help="the gradebook's column for this assignment (its title, part of it, or its "
                        "Canvas id; default: the one whose title names the assignment)")
    p.add_argument("--export-partial", action="store_true",
                   help="export rows whose hand grading is not done with their automatic points "
                        "only (default: held, their gradebook cells left as they are)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``course grade``: returns 0 when the batch finished (whatever the scores), 2 on bad input."""
    p = parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    book = (None if args.gradebook is None
            else Gradebook(args.gradebook, args.gradebook_column, args.export_partial))
    try:
        return grade_class(engine.config_from(args, p), book)
    except (GradingError, lms.GradebookError) as exc:
        print(f"course grade: {exc}", file=sys.stderr)
        return 2


def grade_class(config: GradeConfig, gradebook: Gradebook | None = None) -> int:
    """``course grade`` with ``config``: the gradebook checked first (a wrong one is a usage error
    before, not after, grading; raises :class:`instructor.lms.GradebookError`), the class graded
    with its students' names, then (unless a shard) :func:`after_grading`."""
    if gradebook is not None:
        lms.check_gradebook(gradebook.path, api.load_assignment(config.assignment), gradebook.column)
        config = dataclasses.replace(config, student_names=lms.student_names(gradebook.path),
                                     gradebook=gradebook)
    if config.shard is not None:          # the hand grades and the LMS export wait for the merge
        with engine.running(config):
            outcome = api.grade(config)
            api.say(outcome)
            api.warn(outcome)
        return 0
    return _graded(lambda finish: api.grade(config, finish), gradebook)


def _graded(run: Callable[[api.Finish], api.Outcome], gradebook: Gradebook | None) -> int:
    """A grading (or a merge) with :func:`after_grading` done before it is published: OUT never
    reads the new grading without its hand grades and LMS files."""
    code = 0

    def finish(outcome: api.Outcome) -> None:
        nonlocal code
        api.say(outcome)                    # the grading's summary, then what follows it
        code = after_grading(outcome, gradebook)

    run(finish)
    return code


def after_grading(outcome: api.Outcome, gradebook: Gradebook | None) -> int:
    """What follows a graded class in its output folder (one machine's or merged shards'): the hand
    grades given back, the gradebook remembered, the LMS import written (into the grading before it
    is published: :func:`autograder.api.grade`'s ``finish``)."""
    column = gradebook.column if gradebook else None
    book = gradebook.path if gradebook else None
    try:
        for line in manual.reapply(outcome.out):    # hand grades are never lost to a re-grade
            print(line)
        for line in manual.prefill(outcome.out):    # and manual.csv starts from them
            print(line)
    except manual.ManualError as exc:
        print(f"course grade: the hand grades were not given back: {exc}", file=sys.stderr)
        return 2
    try:
        for line in handback.write(outcome.out):       # canvas_feedback.zip, for Re-Upload Submissions
            print(line)
        lms.remember(outcome.out, book, column)
    except OSError as exc:
        print(f"course grade: cannot write {outcome.out / lms.LMS_META}: {exc.strerror}", file=sys.stderr)
        return 2
    if book is not None:
        try:
            partial = gradebook.export_partial if gradebook else False
            for line in lms.export(outcome.out, book, column, partial):
                print(line)
        except lms.GradebookError as exc:
            print(f"course grade: {exc}", file=sys.stderr)
            return 2
    api.warn(outcome)
    return 0


def merge_main(argv: list[str] | None = None) -> int:
    """``course merge OUT [SHARD_DIR...]``: the shards of ``course grade --shard K/N`` into OUT, as
    one machine's ``course grade --out OUT`` writes it (hand grades given back, LMS import). Exit 0
    when merged; nothing is written otherwise: 1 when a shard is missing (``--wait``: try again until
    none is), 3 when one failed for good, 2 when the shards do not match the files or the grader."""
    p = argparse.ArgumentParser(
        prog="course merge",
        description="Combine the shard results of `course grade ... --shard K/N` (OUT/shards/K-of-N) "
                    "into OUT: grades.csv, results, feedback, report, hand-grading pages, LMS import.")
    p.add_argument("out", type=Path, help="the output folder (the shards' --out)")
    p.add_argument("shard_dirs", nargs="*", type=Path, metavar="SHARD_DIR",
                   help="shard folders (default: every OUT/shards/*)")
    p.add_argument("--assignment", default=None,
                   help="NN_name or a folder (default: the one the shards were graded with)")
    p.add_argument("--no-similarity", action="store_true", help="no similarity flags")
    p.add_argument("--gradebook", type=Path, default=None, help="as for course grade")
    p.add_argument("--gradebook-column", default=None, metavar="TEXT", help="as for course grade")
    p.add_argument("--export-partial", action="store_true", help="as for course grade")
    p.add_argument("--shards", type=int, default=None, metavar="N",
                   help="merge the N shards OUT/shards/K-of-N (default: those of the run, see --run-id)")
    p.add_argument("--wait", action="store_true",
                   help="while shards are missing or unfinished, try again every --poll seconds; stop "
                        "(exit 3) when one failed for good (as the Kubernetes merge Job runs it)")
    p.add_argument("--poll", type=float, default=20.0, help="seconds between tries with --wait (default 20)")
    p.add_argument("--run-id", default=None, metavar="ID",
                   help="merge the shards of this run (the shards' --run-id; default $COURSE_RUN_ID, else "
                        "the only set of shards there is)")
    p.add_argument("--stale-after", type=float, default=shard_merge.STALE_AFTER, metavar="S",
                   help="with --wait: a started shard with no result and no sign of life (its heartbeat, "
                        "its Slurm task in the queue) for S seconds failed (exit 3; default "
                        f"{shard_merge.STALE_AFTER:g})")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if args.shards is not None and args.shards < 1:
        p.error("--shards must be at least 1")
    run = args.run_id or os.environ.get(shards.RUN_ENV) or None
    out = args.out.resolve()
    try:
        if args.wait:                      # the shards still run (a Kubernetes merge Job starts with them)
            shard_merge.wait(out, args.shard_dirs, args.shards, args.poll, run, args.stale_after)
        chosen = shard_merge.complete_set(out, args.shard_dirs, args.shards, run)
    except shards.ShardError as exc:
        print(f"course merge: {exc}", file=sys.stderr)
        return exc.exit_code
    try:                                   # the set chosen by its run, and only its folders
        merged = api.load_merge(out=args.out, shard_dirs=[chosen.mine[k].folder for k in range(chosen.n)],
                                assignment=args.assignment, n=chosen.n)
    except GradingError as exc:
        print(f"course merge: {exc}", file=sys.stderr)
        return exc.exit_code
    merged.notes[:0] = chosen.notes
    gradebook = (None if args.gradebook is None
                 else Gradebook(args.gradebook, args.gradebook_column, args.export_partial))
    if gradebook is None and merged.meta.get("gradebook_conflict"):
        print(f"course merge: {merged.meta['gradebook_conflict']}: name the gradebook (and column) with "
              "--gradebook, or grade the shards again with one; nothing was written", file=sys.stderr)
        return 2
    if gradebook is None and merged.meta.get("gradebook"):     # the merged shards' own --gradebook
        found = merged.meta["gradebook"]
        # and how they were told to export rows whose hand grading is open (older shards: held)
        partial = args.export_partial or (len(found) > 2 and found[2] is True)
        gradebook = Gradebook(Path(found[0]), args.gradebook_column or found[1], partial)
    names: StudentNames = NO_NAMES
    if gradebook is not None:              # names in the report, as course grade puts them there
        try:
            names = lms.student_names(gradebook.path)
        except (lms.GradebookError, OSError) as exc:
            print(f"course merge: {exc}", file=sys.stderr)
            return 2
    try:
        return _graded(lambda finish: api.write_merge(merged, out=args.out, similarity=not args.no_similarity,
                                                      student_names=names, finish=finish), gradebook)
    except GradingError as exc:
        print(f"course merge: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
