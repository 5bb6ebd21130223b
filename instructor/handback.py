"""Feedback back to the students through the LMS, after ``course grade`` and after ``course manual``.

- **Canvas**: ``DIR/canvas_feedback.zip`` holds each row's ``feedback/<stem>.html`` (or the PDF
  ``course pdfs DIR --feedback`` printed from it, when it is newer) named
  ``<name>_<user id>_<attachment id>_feedback.html`` (``LATE`` kept where the download had it),
  the start of the name Canvas gave the submission in its bulk download. Upload it with the
  assignment's *Submissions -> Re-Upload Submissions*: Canvas (``Assignment#generate_comments_from_files``
  and ``infer_comment_context_from_filename`` in canvas-lms's ``app/models/assignment.rb``, later
  ``abstract_assignment.rb``) splits each file's base name at ``_``, takes the first two parts
  that are all digits as the user id and the attachment id, and attaches the file as a comment
  ("See attached file") to that user's submission when the attachment is one of that submission's
  files; any other file is listed as ignored. So the name keeps exactly the download's numbers, and
  nothing else in it is all digits.
- **Held students get no feedback file.** A student whose grade the LMS import holds for the
  instructor (:func:`instructor.lms.graded_rows`: rows whose points differ, code the rules flagged,
  another week's notebook, an unreadable upload) has no file in the zip: their feedback carries the
  points the import holds, and a comment on their submission would hand them over. The terminal
  lists them, as the import does; hand their feedback back once their grade is decided.
- **Moodle**: the grading worksheet's "Feedback comments" column (:func:`instructor.lms.render`,
  :func:`instructor.lms.comments_by_file`),
  filled with the feedback's HTML for every student whose grade is filled in: Moodle's
  offline-grading import (``assignfeedback_offline``) gives each column named after a feedback
  plugin's editor field to that plugin, and the comments plugin (``assignfeedback_comments``:
  ``get_editor_fields`` is ``comments`` => "Feedback comments", ``set_editor_text`` stores the text
  with ``FORMAT_HTML``) keeps it as HTML.

Both are computed from the feedback files (and grades.csv) as they are about to be written
(``pending``), so that ``course manual`` writes them with everything else, all or nothing.
"""
from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path, PurePosixPath
from typing import cast

from autograder import outdir
from autograder.inputs import CANVAS, lms_id

from . import lms

CANVAS_ZIP = "canvas_feedback.zip"
CANVAS_PREFIX = re.compile(r"^([^/_]+_(?:late_)?(\d+)_(\d+))_", re.IGNORECASE)
ZIP_TIME = (2020, 1, 1, 0, 0, 0)         # the same feedback always gives the same bytes


def _fresh(pdf: Path, page: Path, pending: dict[Path, bytes | Path]) -> bool:
    """Is there a PDF of the feedback (``course pdfs DIR --feedback``) printed from the page as it is?"""
    try:
        return page not in pending and \
            outdir.locate(pdf).stat().st_mtime >= outdir.locate(page).stat().st_mtime
    except OSError:
        return False


def canvas_reads(name: str) -> tuple[str, str] | None:
    """(user id, attachment id) as Canvas's re-upload reads them in a file's name: the first two
    parts of the base name, split at ``_``, that are all digits."""
    digits = [p for p in PurePosixPath(name).name.split("_") if re.fullmatch(r"[0-9]+", p)][:2]
    return (digits[0], digits[1]) if len(digits) == 2 else None


def _user(name: str) -> str:
    """The user id Canvas reads in a name that starts with a :func:`canvas_prefix`."""
    return cast("tuple[str, str]", canvas_reads(name))[0]


def canvas_prefix(file: str) -> str | None:
    """``lastfirst[_LATE]_USERID_ATTACHMENTID`` of a row named by Canvas's bulk download (the first
    part of its path so named), else None; None too when Canvas would read other numbers in it (a
    name part that is all digits), so that no file can reach another student."""
    for part in PurePosixPath(file).parts:
        m = CANVAS_PREFIX.match(part)
        if m and CANVAS.match(part):
            return m.group(1) if canvas_reads(m.group(1) + "_x") == (m.group(2), m.group(3)) else None
        if part.lower().endswith(".zip"):
            return None
    return None


def held_students(out: Path, pending: dict[Path, bytes | Path]) -> set[lms.Student]:
    """The students whose grade the LMS import holds (:func:`instructor.lms.graded_rows`), from
    grades.csv as it is about to be written; raises :class:`instructor.lms.GradebookError` when it
    cannot be read (then nobody's feedback can be known to be certain)."""
    data = lms.pending_bytes(out / "grades.csv", pending) if out / "grades.csv" in pending else None
    table = None if data is None else list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    return set(lms.graded_rows(out, table)[3])


def canvas_zip(out: Path, pending: dict[Path, bytes | Path] | None = None
               ) -> tuple[Path, bytes, list[str]] | None:
    """The zip for Canvas's Re-Upload Submissions, its bytes and the lines to print; None when no
    row is named as Canvas names them. Held students' rows are left out and listed."""
    pending = pending or {}
    held = held_students(out, pending)
    entries: list[tuple[str, bytes]] = []
    left_out: list[str] = []
    used: set[str] = set()
    for file, stem in lms.feedback_rows(out):
        prefix = canvas_prefix(file)
        if prefix is not None and lms_id(file) in held:
            left_out.append(file)
            continue
        page, pdf = out / "feedback" / f"{stem}.html", out / "feedback" / f"{stem}.pdf"
        ext = ".pdf" if prefix and _fresh(pdf, page, pending) else ".html"
        data = lms.pending_bytes(pdf if ext == ".pdf" else page, pending) if prefix else None
        if prefix is None or data is None:
            continue
        name, k = f"{prefix}_feedback{ext}", 2
        while name.lower() in used:                  # several notebooks in one upload
            name, k = f"{prefix}_feedback-{k}{ext}", k + 1
        used.add(name.lower())
        entries.append((name, data))
    students = count(len({lms_id(f) for f in left_out}), "student")
    kept_back = [f"HELD from {CANVAS_ZIP}: the feedback of {students} whose grade is held (see HELD) is "
                 "left out, to hand back once you decide it: " + ", ".join(left_out)] if left_out else []
    if not entries and not left_out:
        return None
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name, ZIP_TIME), data, zipfile.ZIP_DEFLATED)
    dest = out / CANVAS_ZIP
    return dest, buf.getvalue(), [f"{dest}: {count(len(entries), 'file')} for "
                                  f"{count(len({_user(n) for n, _d in entries}), 'student')}"
                                  ", to hand back with Canvas's Submissions -> Re-Upload Submissions "
                                  "(each file becomes a comment on that student's submission)"
                                  ] + kept_back


def count(n: int, what: str) -> str:
    """``1 file``, ``13 files``: a count that says what it counts."""
    return f"{n} {what}{'' if n == 1 else 's'}"


def write(out: Path) -> list[str]:
    """Write ``out/canvas_feedback.zip`` (when rows are named by Canvas); the lines to print."""
    try:
        made = canvas_zip(out)
    except lms.GradebookError as exc:           # who is held cannot be known: no feedback goes back
        if (outdir.resolve(out) / CANVAS_ZIP).exists():
            outdir.write_files(out, {out / CANVAS_ZIP: None})
        return [f"no {CANVAS_ZIP} written: {exc}"]
    if made is None:
        return []
    dest, data, lines = made
    outdir.write_files(out, {dest: data})
    return lines
