"""``course mark DIR``: hand grading in the browser, question by question, for several TAs at once.

    course mark DIR                           this machine only: one link, printed, for you
    course mark DIR --host 0.0.0.0 --ta ana --ta ben     a TA server: one link per TA
    course mark DIR --export                  the ledger into grades.csv, feedback, LMS files; no server

DIR is a folder ``course grade`` wrote. The server (Flask's application, :mod:`.app`, served by
waitress) listens on 127.0.0.1 unless ``--host`` says otherwise, and prints one link per TA, each
with a token of its own (as Jupyter's), which the browser keeps in a cookie; without one, nothing
is shown. The answers appear as the hand-grading pages show them, without the students' names
(``--names`` shows them). Every grade goes straight into the folder's ledger
(``DIR/hand_grades.sqlite``, :mod:`instructor.ledger`), the one ``course manual`` merges CSVs into
and a re-grade gives back; *Export* on the first page (or ``--export``) writes ``grades.csv``, the
feedback, ``canvas_feedback.zip``, the LMS import and ``rubric_stats.csv`` from it.
"""
from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path


def serve(out: Path, host: str, port: int, tas: list[str], names: bool) -> int:
    from waitress.server import create_server

    from .app import create_app, new_tokens

    tokens = new_tokens(tas)
    app = create_app(out, tokens, names)
    server = create_server(app, host=host, port=port, threads=8, ident="course mark")
    folder = app.extensions["course_mark"]["folder"]
    shown = "localhost" if host in ("127.0.0.1", "::1", "localhost") else host
    print(f"course mark: {folder.name}, {len(folder.rows)} submissions, questions "
          f"{', '.join(folder.questions)}; every grade goes into {out / 'hand_grades.sqlite'}")
    for token, who in tokens.items():
        print(f"  {who}: http://{shown}:{server.effective_port}/?token={token}")
    if host not in ("127.0.0.1", "::1", "localhost"):
        print("  (plain HTTP: on a network you do not trust, reach it through `ssh -L` instead)")
    print("Ctrl-C stops it. Export (on its first page, or `course mark DIR --export`) writes grades.csv, "
          "the feedback and the LMS files.", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``course mark``: 0 when the server stopped or the export was written, 2 on bad input."""
    p = argparse.ArgumentParser(prog="course mark", description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path, metavar="DIR", help="the --out folder of course grade")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: "
                   "this machine only; 0.0.0.0 for a TA server)")
    p.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    p.add_argument("--ta", action="append", default=[], metavar="NAME",
                   help="a TA who gets a link of their own (repeat it; default: you)")
    p.add_argument("--names", action="store_true", help="show the students' names and files")
    p.add_argument("--export", action="store_true",
                   help="write grades.csv, the feedback and the LMS files from the ledger, then stop")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not (args.out / "grades.csv").is_file() or not (args.out / "questions.json").is_file():
        print(f"course mark: {args.out} is not a folder course grade wrote", file=sys.stderr)
        return 2
    from .. import lms, manual
    from ..ledger import LedgerError
    if args.export:
        from ..ledger import Ledger
        from .app import export
        from .folder import Folder
        try:
            ledger = Ledger(args.out)
            try:
                for line in export(Folder(args.out), ledger):
                    print(line)
            finally:
                ledger.close()
        except manual.StaleFiles as exc:
            print(f"course mark: {exc}", file=sys.stderr)
            return 2
        except (manual.ManualError, lms.GradebookError, LedgerError) as exc:
            print(f"course mark: {exc}\n(nothing in {args.out} was changed)", file=sys.stderr)
            return 2
        return 0
    try:
        return serve(args.out, args.host, args.port, args.ta or [getpass.getuser()], args.names)
    except (manual.ManualError, LedgerError, OSError) as exc:
        print(f"course mark: {exc}", file=sys.stderr)
        return 2
