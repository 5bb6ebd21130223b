"""Similarity flags: pairs of submissions whose answers are suspiciously alike, beyond the course's code.

    course similarity DIR [--threshold T]      (DIR: a folder ``course grade`` wrote)

``course grade`` runs this after grading (``--no-similarity`` skips it). It compares the **answer
cells only** of the submissions of one assignment, question by question, and each submission with
the master's answers (last year's published solution), and writes:

- ``DIR/similarity.csv``: the flagged pairs, most alike first (``score``, ``kind`` = ``pair`` or
  ``master``, the questions involved with their scores, both rows' files and LMS ids, the shared
  fingerprints);
- a section of ``DIR/report.html`` that shows the top flags side by side, the matching lines
  highlighted (static HTML: no script, every character from a notebook escaped).

A flag is for a person to look at, never a grade change: nothing here touches a grade or the
students' feedback.

*Which cells.* :func:`answer_code` runs in :mod:`autograder.notebook_info`'s process (under its
memory cap) while the grader reads the notebooks: every code cell of the submission that is not the
course's own (a cell equal to one of the blank student notebook's code cells: its setup, given
cells, the earlier notebooks' GIVEN answers, the answer templates and the check cells), labelled
with the question whose prompt (``**Question N``) it follows, up to that question's check cell.
``results/<stem>.json`` keeps them (``answer_code``), so ``course similarity DIR`` needs nothing
but the graded folder.

*How*, one module a step:

- :mod:`autograder.similarity_normalise`: each answer cell parsed and normalised (names the
  student chose become ``v``, strings ``s``, equivalent tensor calls one form, comments, docstrings
  and blank lines dropped, definitions and a question's cells in a fixed order);
- :mod:`autograder.similarity_fingerprints`: ``copydetect`` fingerprints each question's
  normalised text (winnowing, as MOSS: k-grams, a window's smallest hash kept), the course's code
  as boilerplate; every fingerprint held by at least half the class (``COMMON``) counts for
  nothing, and, between two students, every fingerprint of the master's answers; a large class is
  normalised on all the machine's cores;
- :mod:`autograder.similarity_index`: an inverted index from fingerprint to submissions names the
  pairs that can be flagged at all (a fingerprint among the rarest of both; none held by more than
  ``INDEX_CAP`` submissions), instead of every pair of the class;
- :mod:`autograder.similarity_scoring`: those pairs scored (Dice: twice the shared fingerprints
  over both notebooks' fingerprints, all questions together, and per question; against the master,
  the share of the student's fingerprints that are the master's); flagged at ``THRESHOLD``, or when
  one large question alone (``QUESTION_SHARED`` fingerprints in common) scores ``QUESTION_SCORE``;
  byte-identical answers always;
- :mod:`autograder.similarity_report`: ``similarity.csv`` and the report's section, the lines
  under the shared fingerprints highlighted (``copydetect.compare_files``).

It runs in a process of its own (:func:`after_grading`): a fixed hash seed (copydetect hashes with
``hash()``, so the same submissions give the same bytes), a memory cap and a time limit. While
``course grade`` writes a folder, the comparison comes before the report: the report's writer
(:func:`autograder.report.write_report`) is given the section; ``course similarity DIR`` on a graded
folder puts the section into its report.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import master_format, outdir
from .notebook import is_setup
from .similarity_fingerprints import (
    COMMON,
    COMMON_MIN,
    WINDOW,
    Fingerprinter,
    K,
    Submission,
    Unit,
    class_hashes,
    fingerprint,
)
from .similarity_index import INDEX_CAP, PAIR_SHARED, QUESTION_SCORE, QUESTION_SHARED
from .similarity_normalise import CourseNames, normalise
from .similarity_report import (
    BEGIN_MARK,
    END_MARK,
    PLACEHOLDER,
    SHOWN,
    SIDE_CHARS,
    csv_text,
    html_section,
    patch_report,
    patched_report,
    write_csv,
)
from .similarity_scoring import (
    IDENTICAL_MASTER,
    IDENTICAL_MIN,
    THRESHOLD,
    Flag,
    identical,
    master_flags,
    pair_flags,
)

__all__ = ["BEGIN_MARK", "COMMON", "COMMON_MIN", "END_MARK", "IDENTICAL_MASTER", "IDENTICAL_MIN",
           "INDEX_CAP", "K", "PAIR_SHARED", "PLACEHOLDER", "QUESTION_SCORE", "QUESTION_SHARED",
           "SHOWN", "SIDE_CHARS", "THRESHOLD", "WINDOW", "CourseNames", "Flag", "Submission", "Unit",
           "after_grading", "answer_code", "compare", "csv_text", "fingerprint", "html_section",
           "master_answers", "normalise", "patch_report", "prepare", "read_folder", "run", "write_csv"]

MAX_CELLS = 200            # answer cells kept per notebook
MAX_CELL_CHARS = 20_000    # characters kept per cell
MAX_CHARS = 200_000        # characters kept per notebook
WORKER_SECONDS = 600       # the comparing process's limit
WORKER_MEMORY = 4 * 2**30

QUESTION_NUMBER = re.compile(r"\*\*(?:Question\s+(\d+)\b|q(\d+)\b)")
CHECK_CALL = re.compile(r"""^\s*(?:\w+\.)?check\(\s*["'][\w\-]+["']\s*\)\s*;?\s*$""")
END_QUESTION = "<!-- END QUESTION -->"


# ---------------------------------------------------------------- which cells are answers

def _text(v: Any) -> str:
    if isinstance(v, list):
        return "".join(x for x in v if isinstance(x, str))
    return v if isinstance(v, str) else ""


def answer_code(nb: Any, course_code: list[str]) -> list[dict]:
    """The answer cells of a parsed notebook: ``[{"cell": N, "question": "q3" or "", "source"}]``.
    A cell is an answer unless it is the course's own (equal to one of ``course_code``, the blank
    student notebook's code cells), the setup cell, a check cell or empty. Its question is the last
    ``**Question N`` prompt before it, until that question's check cell or end marker."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return []
    course = {c.strip() for c in course_code}
    out: list[dict] = []
    current, total, setup_seen = "", 0, False
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        src = _text(cell.get("source"))
        if cell.get("cell_type") == "markdown":
            end = src.rfind(END_QUESTION)
            found = list(QUESTION_NUMBER.finditer(src))
            if found and found[-1].start() > end:
                m = found[-1]
                current = f"q{m.group(1) or m.group(2)}"
            elif end >= 0:
                current = ""
            continue
        if cell.get("cell_type") != "code":
            continue
        stripped = src.strip()
        lines = [x for x in stripped.splitlines() if x.strip()]
        if lines and all(CHECK_CALL.match(x) for x in lines):
            current = ""
            continue
        if is_setup(stripped) and not setup_seen:     # the course's, as the grader runs it: only the
            setup_seen = True                         # first (a later one runs as the student's)
            continue
        if not stripped or stripped in course:
            continue
        if len(out) >= MAX_CELLS or total >= MAX_CHARS:
            break
        src = src[:min(MAX_CELL_CHARS, MAX_CHARS - total)]
        total += len(src)
        out.append({"cell": i + 1, "question": current, "source": src})
    return out


def master_answers(name: str, repo: Path | None = None) -> list[dict] | None:
    """The master's answer lines (solutions/NN_name.ipynb), as :func:`answer_code` gives a
    submission's; None when the master is not here."""
    repo = repo or Path(__file__).resolve().parent.parent
    path = repo / "solutions" / f"{name}.ipynb"
    if not path.is_file():
        return None
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    out = []
    for place in master_format.walk(cells):
        if place.cell.get("cell_type") == "code" and place.question and place.region != "tests":
            answer = master_format.split_solution(_text(place.cell.get("source")))[0]
            if answer.strip():
                out.append({"cell": place.index + 1, "question": place.question.name, "source": answer})
    return out


# ---------------------------------------------------------------- a class

def prepare(submissions: list[dict], course_code: list[str], master: list[dict] | None = None,
            common: float = COMMON, pygments: bool = False) -> tuple[list[Submission], Submission | None]:
    """Every submission fingerprinted (``{"file", "id", "answer_code"}`` each), and the master's
    answers (or None), with what counts against classmates and the master (:func:`class_hashes`)."""
    import numpy as np
    names = CourseNames.of(course_code)
    lines = (lambda c: [(x, i, i) for i, x in enumerate(c.splitlines(), 1) if x.strip()]) if pygments \
        else (lambda c: normalise(c, names))
    course_text = "\n".join(text for c in course_code for text, _a, _b in lines(c))
    boiler = np.array(sorted(fingerprint(course_text, window=1, pygments=pygments).hashes)) \
        if len(course_text) >= K else None
    maker = Fingerprinter(names, boiler, pygments)
    subs = maker.all(submissions)
    master_sub = maker.submission("(the master's answers)", "", master) if master else None
    class_hashes(subs, master_sub, common)
    return subs, master_sub


def compare(submissions: list[dict], course_code: list[str], master: list[dict] | None = None,
            threshold: float = THRESHOLD, common: float = COMMON, pygments: bool = False) -> list[Flag]:
    """Every flag of a class: ``submissions`` are ``{"file", "id", "answer_code"}``; ``course_code``
    the course's code cells (boilerplate); ``master`` the master's answers (or None). ``pygments``:
    copydetect's own tokens instead of :func:`normalise` (to measure what normalising adds)."""
    subs, master_sub = prepare(submissions, course_code, master, common, pygments)
    flags = master_flags(subs, master_sub, threshold) if master_sub is not None else []
    flags = identical(subs, master_sub, flags + pair_flags(subs, threshold))
    flags.sort(key=lambda f: (-f.score, f.kind, f.a.file, f.b.file))
    return flags


# ---------------------------------------------------------------- a graded folder

def read_folder(out: Path) -> tuple[str, list[dict]]:
    """The assignment's name and every row's answer cells, from a folder ``course grade`` wrote."""
    try:
        name = json.loads((out / "questions.json").read_text(encoding="utf-8"))["assignment"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"course similarity: {out} is not a folder course grade wrote "
                         f"(no questions.json): {exc}") from None
    subs: list[dict[str, Any]] = []
    for path in sorted((out / "results").glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        code = doc.get("answer_code")
        if isinstance(code, list):
            cells = [c for c in code if isinstance(c, dict) and isinstance(c.get("source"), str)
                     and isinstance(c.get("cell"), int)]
            subs.append({"file": str(doc.get("file", path.stem)), "id": str(doc.get("id", "")),
                         "answer_code": cells})
    subs.sort(key=lambda s: s["file"])
    return str(name), subs


def run(out: Path, threshold: float = THRESHOLD) -> tuple[list[Flag], float, str]:
    """Compare a graded folder's submissions; write similarity.csv, and the report's section into
    its report.html when the folder has one (``course similarity DIR``; ``course grade`` writes the
    report after, with the section this returns)."""
    from .assignment import AssignmentError, load
    t0 = time.monotonic()
    where = outdir.resolve(out)       # one grading, read whole whatever swap happens meanwhile
    name, subs = read_folder(where)
    try:
        course_code = load(name).given_code
    except AssignmentError:
        course_code = []
    master = master_answers(name)
    flags = compare(subs, course_code, master, threshold)
    seconds = time.monotonic() - t0
    # published as a change of OUT's grading, never written through its links: the files are hard
    # links shared with the grading kept as .previous (in a staging folder: written in place)
    files: dict[Path, bytes | None] = {out / "similarity.csv": csv_text(flags).encode("utf-8", "replace")}
    section = html_section(flags, threshold, seconds, len(subs), master is not None)
    report = where / "report.html"
    if report.is_file():
        text = patched_report(report.read_text(encoding="utf-8"), section)
        files[out / "report.html"] = text.encode("utf-8")
    outdir.write_files(out, files)
    return flags, seconds, section


SECTION = "similarity section: "     # the line of the comparing process that holds the section (JSON)


@dataclass(frozen=True)
class Compared:
    """What :func:`after_grading` did: the line to print, and the report's section (None: not
    compared; the report keeps its placeholder)."""

    line: str
    section: str | None = None


def after_grading(out: Path, threshold: float = THRESHOLD) -> Compared:
    """``course grade``'s hook: :func:`run` in a process of its own (a fixed hash seed, so the same
    submissions give the same flags; a memory cap and a time limit: it parses students' code). The
    line to print and the report's section."""
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    try:
        proc = subprocess.run([sys.executable, "-m", "autograder.similarity", str(out), "--threshold",
                               str(threshold), "--here"], env=env, capture_output=True, text=True,
                              timeout=WORKER_SECONDS)
    except subprocess.TimeoutExpired:
        return Compared(f"similarity: not compared (over {WORKER_SECONDS} s)")
    lines = (proc.stdout or "").strip().splitlines()
    if proc.returncode != 0 or not lines:
        why = (proc.stderr or '').strip().splitlines()[-1:] or 'failed'
        return Compared(f"similarity: not compared ({why})")
    said = [line for line in lines if line.startswith(SECTION)]
    return Compared(lines[-1], json.loads(said[-1][len(SECTION):]) if said else None)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="course similarity",
                                description="Flag pairs of submissions whose answers are alike, in a "
                                            "folder course grade wrote (similarity.csv, report.html).")
    p.add_argument("out", type=Path, help="the folder course grade wrote")
    p.add_argument("--threshold", type=float, default=THRESHOLD,
                   help=f"flag at this score (default {THRESHOLD})")
    p.add_argument("--here", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not (args.out / "questions.json").is_file():
        print(f"course similarity: {args.out} is not a folder course grade wrote", file=sys.stderr)
        return 2
    if not args.here:
        print(after_grading(args.out, args.threshold).line)
        return 0
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
    except (ValueError, OSError):
        pass
    flags, seconds, section = run(args.out, args.threshold)
    print(SECTION + json.dumps(section))
    pairs = sum(f.kind == "pair" for f in flags)
    print(f"similarity: {pairs} pair(s) and {len(flags) - pairs} alike to the master flagged in "
          f"{seconds:.1f} s -> {args.out / 'similarity.csv'} (flags to look at, not grades)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
