"""The instructor's command line: one verb per job.

    course build                     master notebooks -> student notebooks + autograder tests
    course grade SUBMISSION... --assignment NN_name --out DIR [--gradebook CANVAS.csv]
    course manual DIR FILLED.csv [--gradebook CANVAS.csv]   merge hand-graded points into DIR
    course solutions [--quick] [NOTEBOOK...]
    course release OUT [--upto NN]   the student bundle for Colab
    course data --from FILE          put a local TinyStories text file into the data cache
"""
from __future__ import annotations

import sys
from pathlib import Path

USAGE = __doc__


def _release(argv: list[str]) -> int:
    import argparse

    from .release import write_bundle

    parser = argparse.ArgumentParser(prog="course release",
                                     description="Write the student bundle OUT/course-student.zip.")
    parser.add_argument("out", type=Path)
    parser.add_argument("--upto", metavar="NN_name",
                        help="release the notebooks up to this one only (each notebook gives the "
                             "earlier ones' answers, so release one week at a time)")
    args = parser.parse_args(argv)
    path = write_bundle(args.out, upto=args.upto)
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


def _data(argv: list[str]) -> int:
    import argparse

    from .data import cache_dir, save_to_cache

    parser = argparse.ArgumentParser(prog="course data",
                                     description="Put a TinyStories text file into the data cache.")
    parser.add_argument("--from", dest="source", type=Path, required=True)
    args = parser.parse_args(argv)
    if not args.source.is_file():
        parser.error(f"no such file: {args.source}")
    data = args.source.read_bytes()[:4_000_000]
    path = save_to_cache(data, f"local file {args.source.name}", cache_dir())
    print(f"cached {len(data):,} bytes from {args.source} as {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    verb, rest = argv[0], argv[1:]
    if verb == "build":
        from .build import main as run
    elif verb == "grade":
        from autograder.grade import main as run
    elif verb == "manual":
        from autograder.manual import main as run
    elif verb == "solutions":
        from .solutions import main as run
    elif verb == "release":
        run = _release
    elif verb == "data":
        run = _data
    else:
        print(f"course: unknown command {verb!r}\n{USAGE}", file=sys.stderr)
        return 2
    return run(rest)


if __name__ == "__main__":
    sys.exit(main())
