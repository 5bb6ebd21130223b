"""Every CSV the grader writes or reads back, made safe against what a submission can put in a cell.

A row's name (a file name from a student's zip) and its status can hold anything a student typed.
Three rules keep one row from breaking another's:

- **Written as RFC 4180 says** (:func:`csv_text`): lines end in ``\\r\\n``, so Python's writer quotes
  every field holding a ``\\r`` or a ``\\n`` (with ``\\n`` line ends, a lone ``\\r`` would go out
  unquoted and a reader would split the row there).
- **Text cells are escaped reversibly** (:func:`text_cell`, :func:`cell_text`): a cell that a
  spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, carriage return), or that
  starts with an apostrophe, gets one more leading apostrophe (OWASP's advice against CSV
  injection); reading strips exactly one. Two different names never print as the same cell.
- **Status details are cleaned** (:func:`clean`): control characters and line or paragraph
  separators become ``?`` and the text is cut, so no status can hold a line break at all.

:func:`file_key` is the opaque key that joins ``manual.csv`` (and any filled-in copy of it) to
``grades.csv``: it depends only on the row's name, holds only letters and digits, and no
spreadsheet changes it. :func:`read_spreadsheet` reads back what a person's spreadsheet saved (a
filled-in ``manual.csv``, an LMS gradebook export).
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
from pathlib import Path

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# C0 and C1 controls, DEL, line and paragraph separators, and the bidirectional overrides that
# make a name read differently from what it is
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class CsvRowError(ValueError):
    """A CSV file with a row that is not as the grader wrote it."""


def clean(text: str, limit: int = 300) -> str:
    """``text`` on one line: control characters replaced by ``?``, at most ``limit`` characters."""
    return CONTROL.sub("?", text)[:limit]


def text_cell(text: str) -> str:
    """A CSV cell no spreadsheet runs as a formula (``=HYPERLINK(...)`` -> ``'=HYPERLINK(...)``);
    a leading apostrophe is doubled, so that :func:`cell_text` gives back exactly ``text``."""
    return "'" + text if text.startswith(FORMULA_START + ("'",)) else text


def cell_text(cell: str) -> str:
    """The text that :func:`text_cell` wrote as ``cell``."""
    return cell[1:] if cell.startswith("'") else cell


def file_key(file: str) -> str:
    """An opaque key of a row's name: ``k`` and 20 hexadecimal digits of its SHA-256 (80 bits: no
    name can be made to share a classmate's key), never read by a spreadsheet as a number."""
    return "k" + hashlib.sha256(file.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def csv_text(rows: list[list[str]], delimiter: str = ",") -> str:
    """``rows`` as CSV text with ``\\r\\n`` line ends (every field with a line break quoted)."""
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    return buf.getvalue()


def read_table(path: Path, width: int | None = None) -> list[list[str]]:
    """A CSV file the grader wrote (``grades.csv``), read with ``newline=""`` (a quoted line break
    stays inside its field); raises :class:`CsvRowError` naming the first row whose number of
    fields differs from the header's (or ``width``)."""
    with open(path, newline="", encoding="utf-8") as f:
        try:
            rows = list(csv.reader(f))
        except csv.Error as exc:
            raise CsvRowError(f"{path.name}: not a CSV file ({exc})") from None
    if not rows:
        raise CsvRowError(f"{path.name} is empty")
    want = width or len(rows[0])
    for n, row in enumerate(rows[1:], 2):
        if len(row) != want:
            raise CsvRowError(f"{path.name} row {n} has {len(row)} fields, not {want} as the header: "
                              "the file was changed by hand? (run course grade again)")
    return rows


def first_records(text: str, sep: str, n: int = 3) -> list[list[str]]:
    """The first ``n`` records of ``text`` that are not blank, read as CSV with ``sep``: only ``\r``
    and ``\n`` end a line, and a quoted field keeps its line breaks (``str.splitlines`` also
    splits at U+2028, U+0085 and others a student's name may hold)."""
    records: list[list[str]] = []
    try:
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=sep):
            if len(row) > 1 or (row and row[0].strip()):
                records.append(row)
                if len(records) == n:
                    break
    except csv.Error:
        return []
    return records


def sniff_delimiter(text: str) -> str:
    """As Canvas decides: ``;`` when it splits the first records into the same, larger, number of
    fields (a spreadsheet with decimal commas saves with ``;``); when neither splits them evenly
    (a CSV typed by hand, a row left short), the one that splits the header into more fields."""
    records = {sep: first_records(text, sep) for sep in (";", ",")}
    counts = {}
    for sep, rows in records.items():
        sizes = {len(row) for row in rows}
        counts[sep] = sizes.pop() if len(sizes) == 1 else 0
        counts[sep] = counts[sep] if counts[sep] > 1 else 0
    if not any(counts.values()):
        counts = {sep: len(rows[0]) if rows else 0 for sep, rows in records.items()}
    return ";" if counts[";"] > counts[","] else ","


def read_spreadsheet(raw: bytes) -> tuple[list[list[str]], str, bool]:
    """(rows, delimiter, had a UTF-8 BOM) of a CSV file as a person's spreadsheet saved it: UTF-8,
    else cp1252 (an Excel "CSV" save on Windows); ``,`` or ``;``; never with universal newlines (a
    quoted ``\r`` stays inside its field). Raises :class:`CsvRowError` when it is not CSV."""
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", "replace")
    sep = sniff_delimiter(text)
    try:
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=sep)), sep, bom
    except csv.Error as exc:
        raise CsvRowError(f"not a CSV file ({exc})") from None
