"""The instructor's command line: one verb per job.

    course new NN_name "Title"       a new notebook from the template, listed in course.toml
    course build [NN_name...]        master notebooks -> student notebooks + autograder tests
    course grade SUBMISSION... --assignment NN_name --out DIR [--gradebook CANVAS.csv] [--shard K/N]
    course merge DIR [SHARD_DIR...]  the shards of `course grade --shard K/N` into DIR
    course slurm DIR --shards N --assignment NN_name SUBMISSION... [--submit]   a job array + merge job
    course kubernetes DIR --shards N --assignment NN_name --image IMAGE SUBMISSION...   an Indexed Job
    course manual DIR FILLED.csv [--gradebook CANVAS.csv]   merge hand-graded points into DIR
    course mark DIR [--host H] [--ta NAME]...   hand grading in the browser (rubrics, several TAs)
    course pdfs DIR                  the hand-graded answers as one PDF per student (Gradescope)
    course nbgrader NN_name [--course-dir DIR]   autograde an nbgrader class with the engine
    course similarity DIR [--threshold T]   flag pairs of submissions whose answers are alike
    course solutions [--quick] [NOTEBOOK...]
    course release OUT --upto NN_name | --all   the public repository's tree for Colab
    course data --from FILE          put a local TinyStories text file into the data cache
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from autograder.refusal import run as refusing

USAGE = __doc__


def _release(argv: list[str]) -> int:
    import argparse

    from .publish import ConfigError, load
    from .release import (
        ReleaseError,
        built_names,
        given_away,
        given_away_lines,
        released_names,
        write_release,
    )

    parser = argparse.ArgumentParser(
        prog="course release",
        description="Write into OUT the tree of the public repository students open the notebooks "
                    "from: the student notebooks up to one of them, their public tests, the course "
                    "package, a README with Colab badges, and course-student.zip.")
    parser.add_argument("out", type=Path, help="a clone of the public repository (or an empty folder)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--upto", metavar="NN_name",
                       help="the last notebook students get, named exactly (e.g. 03_attention)")
    which.add_argument("--all", action="store_true",
                       help="every notebook: gives away the answers of all but the last one")
    args = parser.parse_args(argv)
    if args.upto is None and not args.all:
        print("course release: say which notebooks to release: --upto NN_name (the last one students "
              "get; each notebook's GIVEN cells hold the answers of the earlier ones) or --all. "
              "Notebooks: " + ", ".join(built_names()), file=sys.stderr)
        return 2
    try:
        names = released_names(args.upto, args.all)
        written = write_release(args.out, names)
    except (ReleaseError, ConfigError) as exc:
        print(f"course release: {exc}", file=sys.stderr)
        return 2
    bundle = args.out / "course-student.zip"
    print(f"released {len(names)} notebook(s), {names[0]} to {names[-1]}, into {args.out}: "
          f"{len(written)} files, {bundle} ({bundle.stat().st_size:,} bytes)")
    for line in given_away_lines(given_away(names), names, args.all):
        print(line)
    settings = load()
    print(f"Next: commit and push {args.out} to github.com/{settings.repository} (branch "
          f"{settings.branch}); the setup cells download {settings.bundle}")
    return 0


def _data(argv: list[str]) -> int:
    from course.data import main as run

    return run(argv, prog="course data")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    verb, rest = argv[0], argv[1:]
    run: Callable[[list[str]], int]
    if verb == "new":
        from .new import main as run
    elif verb == "build":
        from .build import main as run
    elif verb == "grade":
        from .grade import main as run
    elif verb == "merge":
        from .grade import merge_main as run
    elif verb == "slurm":
        from .slurm import main as run
    elif verb == "kubernetes":
        from .kubernetes import main as run
    elif verb == "manual":
        from .manual import main as run
    elif verb == "mark":
        from .mark import main as run
    elif verb == "pdfs":
        from .gradescope_pdf import main as run
    elif verb == "nbgrader":
        from .nbgrader.grade import main as run
    elif verb == "similarity":
        from autograder.similarity import main as run
    elif verb == "solutions":
        from .solutions import main as run
    elif verb == "release":
        run = _release
    elif verb == "data":
        run = _data
    else:
        print(f"course: unknown command {verb!r}\n{USAGE}", file=sys.stderr)
        return 2
    return refusing(f"course {verb}", run, rest)      # a full disk or a read-only folder: a sentence


if __name__ == "__main__":
    sys.exit(main())
