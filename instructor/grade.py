"""``course grade``: the grading engine (:mod:`autograder.grade`) with the LMS export after it.

    course grade SUBMISSION... --assignment NN_name --out DIR [--workers N] [--timeout S] [--memory GB]
                 [--gradebook CANVAS.csv [--gradebook-column TEXT]]

Everything but ``--gradebook`` is the engine's (``python -m autograder`` takes the same options).
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
import sys
from pathlib import Path

from autograder import grade as engine
from autograder import handgrading, shards

from . import handback, lms, manual


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = engine.parser("course grade")
    p.add_argument("--gradebook", type=Path, default=None,
                   help="the gradebook CSV downloaded from Canvas (or Moodle's grading worksheet): "
                        "also write DIR/canvas_import.csv (moodle_import.csv) with this assignment's "
                        "column filled, to import back")
    p.add_argument("--gradebook-column", default=None, metavar="TEXT",
                   help="the gradebook's column for this assignment (its title, part of it, or its "
                        "Canvas id; default: the one whose title names the assignment)")
    return engine.parse_args(argv, p)


def main(argv: list[str] | None = None) -> int:
    """``course grade``: returns 0 when the batch finished (whatever the scores), 2 on bad input."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    asg = engine.load(args)
    if asg is None:
        return 2
    handgrading.STUDENT_NAMES.clear()
    if args.gradebook is not None:        # a wrong gradebook is a usage error before, not after, grading
        try:
            lms.check_gradebook(args.gradebook, asg, args.gradebook_column)
        except lms.GradebookError as exc:
            print(f"course grade: {exc}", file=sys.stderr)
            return 2
        handgrading.STUDENT_NAMES.update(lms.student_names(args.gradebook))   # names in the report
    outcome = engine.run(args, asg)
    if isinstance(outcome, int):
        return outcome
    if args.shard is not None:            # the hand grades and the LMS export wait for the merge
        engine.warn(outcome)
        return 0
    return after_grading(outcome, args.gradebook, args.gradebook_column)


def after_grading(outcome: engine.Outcome, gradebook: Path | None, column: str | None) -> int:
    """What follows a graded class in its output folder (one machine's or merged shards'): the hand
    grades given back, the gradebook remembered, the LMS import written."""
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
        lms.remember(outcome.out, gradebook, column)
    except OSError as exc:
        print(f"course grade: cannot write {outcome.out / lms.LMS_META}: {exc.strerror}", file=sys.stderr)
        return 2
    if gradebook is not None:
        try:
            for line in lms.export(outcome.out, gradebook, column):
                print(line)
        except lms.GradebookError as exc:
            print(f"course grade: {exc}", file=sys.stderr)
            return 2
    engine.warn(outcome)
    return 0


def merge_main(argv: list[str] | None = None) -> int:
    """``course merge OUT [SHARD_DIR...]``: the shards of ``course grade --shard K/N`` into OUT, as
    one machine's ``course grade --out OUT`` writes it (hand grades given back, LMS import). Exit 0
    when merged, 1 when a shard is missing (nothing written), 2 on bad input."""
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
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    gradebook, column = args.gradebook, args.gradebook_column
    if gradebook is None:                  # the shards' own --gradebook
        found = shards.gradebook_of(args.out.resolve(), args.shard_dirs)
        if found is not None:
            gradebook, column = Path(found[0]), column or found[1]
    handgrading.STUDENT_NAMES.clear()
    if gradebook is not None:              # names in the report, as course grade puts them there
        try:
            handgrading.STUDENT_NAMES.update(lms.student_names(gradebook))
        except (lms.GradebookError, OSError) as exc:
            print(f"course merge: {exc}", file=sys.stderr)
            return 2
    outcome = engine.merge(args.out, args.shard_dirs, args.assignment, args.no_similarity)
    if isinstance(outcome, int):
        return outcome
    return after_grading(outcome, gradebook, column)


if __name__ == "__main__":
    sys.exit(main())
