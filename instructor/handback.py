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
- **Moodle**: the grading worksheet's "Feedback comments" column (:func:`instructor.lms.render`),
  filled with the feedback's HTML for every student whose grade is filled in: Moodle's
  offline-grading import (``assignfeedback_offline``) gives each column named after a feedback
  plugin's editor field to that plugin, and the comments plugin (``assignfeedback_comments``:
  ``get_editor_fields`` is ``comments`` => "Feedback comments", ``set_editor_text`` stores the text
  with ``FORMAT_HTML``) keeps it as HTML.

Both are computed from the feedback files as they are about to be written (``pending``), so that
``course manual`` writes them with everything else, all or nothing.
"""
from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path, PurePosixPath

from autograder import feedback
from autograder.inputs import CANVAS

CANVAS_ZIP = "canvas_feedback.zip"
CANVAS_PREFIX = re.compile(r"^([^/_]+_(?:late_)?(\d+)_(\d+))_", re.IGNORECASE)
ZIP_TIME = (2020, 1, 1, 0, 0, 0)         # the same feedback always gives the same bytes


def rows(out: Path) -> list[tuple[str, str]]:
    """(row name, stem) of every graded row in ``out/results``."""
    found = []
    for p in sorted((out / "results").glob("*.json")):
        try:
            found.append((str(json.loads(p.read_text(encoding="utf-8"))["file"]), p.stem))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def _read(path: Path, pending: dict[Path, bytes]) -> bytes | None:
    if path in pending:
        return pending[path]
    try:
        return path.read_bytes()
    except OSError:
        return None


def _fresh(pdf: Path, page: Path, pending: dict[Path, bytes]) -> bool:
    """Is there a PDF of the feedback (``course pdfs DIR --feedback``) printed from the page as it is?"""
    try:
        return page not in pending and pdf.stat().st_mtime >= page.stat().st_mtime
    except OSError:
        return False


def canvas_reads(name: str) -> tuple[str, str] | None:
    """(user id, attachment id) as Canvas's re-upload reads them in a file's name: the first two
    parts of the base name, split at ``_``, that are all digits."""
    digits = [p for p in PurePosixPath(name).name.split("_") if re.fullmatch(r"[0-9]+", p)][:2]
    return (digits[0], digits[1]) if len(digits) == 2 else None


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


def canvas_zip(out: Path, pending: dict[Path, bytes] | None = None) -> tuple[Path, bytes, list[str]] | None:
    """The zip for Canvas's Re-Upload Submissions, its bytes and the line to print; None when no
    row is named as Canvas names them."""
    pending = pending or {}
    entries: list[tuple[str, bytes]] = []
    used: set[str] = set()
    for file, stem in rows(out):
        prefix = canvas_prefix(file)
        page, pdf = out / "feedback" / f"{stem}.html", out / "feedback" / f"{stem}.pdf"
        ext = ".pdf" if prefix and _fresh(pdf, page, pending) else ".html"
        data = _read(pdf if ext == ".pdf" else page, pending) if prefix else None
        if prefix is None or data is None:
            continue
        name, k = f"{prefix}_feedback{ext}", 2
        while name.lower() in used:                  # several notebooks in one upload
            name, k = f"{prefix}_feedback-{k}{ext}", k + 1
        used.add(name.lower())
        entries.append((name, data))
    if not entries:
        return None
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name, ZIP_TIME), data, zipfile.ZIP_DEFLATED)
    dest = out / CANVAS_ZIP
    return dest, buf.getvalue(), [f"{dest}: {count(len(entries), 'file')} for "
                                  f"{count(len({canvas_reads(n)[0] for n, _d in entries}), 'student')}"
                                  ", to hand back with Canvas's Submissions -> Re-Upload Submissions "
                                  "(each file becomes a comment on that student's submission)"]


def count(n: int, what: str) -> str:
    """``1 file``, ``13 files``: a count that says what it counts."""
    return f"{n} {what}{'' if n == 1 else 's'}"


def comments_by_file(out: Path, pending: dict[Path, bytes] | None = None) -> dict[str, str]:
    """{row name: its feedback as HTML, without the page around it}: Moodle's "Feedback comments"."""
    pending = pending or {}
    found = {}
    for file, stem in rows(out):
        data = _read(out / "feedback" / f"{stem}.md", pending)
        if data is not None:
            found[file] = feedback.body_html(data.decode("utf-8", errors="replace")).strip()
    return found


def write(out: Path) -> list[str]:
    """Write ``out/canvas_feedback.zip`` (when rows are named by Canvas); the lines to print."""
    made = canvas_zip(out)
    if made is None:
        return []
    dest, data, lines = made
    tmp = dest.with_name(f".{dest.name}.part")
    tmp.write_bytes(data)
    tmp.replace(dest)
    return lines
