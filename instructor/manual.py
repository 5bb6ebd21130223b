"""``course manual DIR FILLED.csv``: merge hand-graded points back into a ``course grade`` output.

``course grade`` writes the pages and the CSV to fill in (:mod:`autograder.handgrading`). This
command checks every number against its question's points (a mistake changes nothing and says where
it is), writes the points into ``grades.csv`` (the manual columns, ``manual_points_earned``,
``final_points_earned``), adds them and the comment to each student's ``feedback/<stem>.md``, and
with ``--gradebook`` rewrites the LMS import (:mod:`instructor.lms`). A blank cell leaves that grade
as it was, so several people can fill in parts and merge in turn.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from autograder.csvcells import CsvRowError, cell_text, csv_text, file_key, read_spreadsheet, read_table
from autograder.results import EXTRA_COLUMNS, num

from . import lms

MARKER = "<!-- graded by hand: written by course manual -->"


class ManualError(ValueError):
    """A filled-in CSV that cannot be merged (nothing was written)."""


def _read_csv(path: Path) -> list[list[str]]:
    """A filled-in CSV as a person's spreadsheet saved it (:func:`csvcells.read_spreadsheet`)."""
    try:
        return read_spreadsheet(path.read_bytes())[0]
    except CsvRowError as exc:
        raise ManualError(f"{path.name} is {exc}") from None


def parse_points(text: str) -> float | None:
    """A number of points as a person types it (``1``, ``0.5``, ``0,5``); None when blank."""
    t = text.strip()
    if not t:
        return None
    if "," in t and "." not in t:
        t = t.replace(",", ".")
    v = float(t)                                          # ValueError for anything else
    if not math.isfinite(v):
        raise ValueError(t)
    return v


def merge(out: Path, filled: Path) -> list[str]:
    """Merge a filled-in CSV into ``out/grades.csv`` (see the module's docstring); the lines to print."""
    try:
        spec = json.loads((out / "questions.json").read_text(encoding="utf-8"))
        grades = read_table(out / "grades.csv")
    except CsvRowError as exc:
        raise ManualError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise ManualError(f"{out} is not an output folder of course grade ({exc})") from None
    manual_qs = {q["name"]: float(q["points"]) for q in spec["questions"] if q["manual"]}
    header, body = grades[0], grades[1:]
    if not manual_qs:
        raise ManualError(f"{spec['assignment']} has no question graded by hand")
    try:
        rows = _read_csv(filled)
    except OSError as exc:
        raise ManualError(f"cannot read {filled}: {exc.strerror}") from None
    if not rows or "file" not in [c.strip() for c in rows[0]]:
        raise ManualError(f"{filled}: the first row must name the columns (file, id, "
                          f"{', '.join(manual_qs)}, comment)")
    cols = [c.strip() for c in rows[0]]
    qcols = {q: cols.index(q) for q in manual_qs if q in cols}
    if not qcols:
        raise ManualError(f"{filled} has no column for {', '.join(manual_qs)}")
    unknown = [c for c in cols if c and c not in ("file", "id", "comment", "key", *manual_qs)]
    files = [cell_text(r[0]) for r in body]
    by_key = {file_key(f): i for i, f in enumerate(files)}
    by_name = {f: i for i, f in enumerate(files)}
    errors: list[str] = []
    updates: dict[int, dict[str, float]] = {}
    comments: dict[int, str] = {}
    seen: dict[str, int] = {}
    for n, row in enumerate(rows[1:], 2):
        if not any(c.strip() for c in row):
            continue
        row = row + [""] * (len(cols) - len(row))
        cell = row[cols.index("file")]
        where = f"{filled.name} row {n} ({cell_text(cell)})"
        found = _find_row(row[cols.index("key")].strip() if "key" in cols else "", cell, by_key, by_name)
        if isinstance(found, str):
            errors.append(f"{where}: {found}")
            continue
        key = files[found]
        if key in seen:
            errors.append(f"{where}: the same file as row {seen[key]}")
            continue
        seen[key] = n
        for q, c in qcols.items():
            try:
                v = parse_points(row[c])
            except ValueError:
                errors.append(f"{where}: {q} = {row[c]!r} is not a number")
                continue
            if v is None:
                continue
            if not 0 <= v <= manual_qs[q] + 1e-9:
                errors.append(f"{where}: {q} = {row[c].strip()} is not between 0 and {num(manual_qs[q])}")
                continue
            updates.setdefault(found, {})[q] = v
        if "comment" in cols and row[cols.index("comment")].strip():
            comments[found] = row[cols.index("comment")].strip()
    if errors:
        more = f"\n(and {len(errors) - 20} more)" if len(errors) > 20 else ""
        raise ManualError("nothing merged:\n" + "\n".join(errors[:20]) + more)
    col = {name: header.index(name) for name in [*manual_qs, "total_points_earned", *EXTRA_COLUMNS]}
    for i, values in updates.items():
        for q, v in values.items():
            body[i][col[q]] = num(v)
    complete = 0
    for row in body:
        got = [row[col[q]] for q in manual_qs]
        if all(g.strip() for g in got):
            earned = sum(float(g) for g in got)
            row[col["manual_points_earned"]] = num(earned)
            row[col["final_points_earned"]] = num(float(row[col["total_points_earned"]]) + earned)
            complete += 1
        else:
            row[col["manual_points_earned"]] = row[col["final_points_earned"]] = ""
    tmp = out / "grades.csv.part"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(csv_text([header, *body]))
    tmp.replace(out / "grades.csv")
    _update_feedback(out, manual_qs, header, body, comments)
    n = sum(len(v) for v in updates.values())
    lines = [f"merged {n} grades from {filled} into {out / 'grades.csv'}: "
             f"{complete} of {len(body)} rows have every hand-graded question ({', '.join(manual_qs)})"]
    if unknown:
        lines.append(f"note: columns ignored: {', '.join(unknown)}")
    missing = [q for q in manual_qs if q not in qcols]
    if missing:
        lines.append(f"note: {filled.name} has no column for {', '.join(missing)}")
    return lines


def _find_row(key: str, cell: str, by_key: dict[str, int], by_name: dict[str, int]) -> int | str:
    """The grades.csv row a filled-in row is about: by its key where it has one, else by its file
    cell as written (or as a spreadsheet that dropped the leading apostrophe left it); a string
    saying why not otherwise."""
    if key:
        return by_key[key] if key in by_key else f"no row in grades.csv has the key {key!r}"
    for name in dict.fromkeys((cell_text(cell), cell)):
        if name in by_name:
            return by_name[name]
    return "no such row in grades.csv"


def _update_feedback(out: Path, manual_qs: dict[str, float], header: list[str], body: list[list[str]],
                     comments: dict[int, str]) -> None:
    """Each student's feedback gets (or has replaced) a section with the hand-graded points."""
    stems: dict[str, str] = {}
    for p in sorted((out / "results").glob("*.json")):
        try:
            stems[json.loads(p.read_text(encoding="utf-8"))["file"]] = p.stem
        except (OSError, ValueError, KeyError):
            continue
    for i, row in enumerate(body):
        stem = stems.get(cell_text(row[0]))
        path = out / "feedback" / f"{stem}.md"
        if stem is None or not path.exists():
            continue
        text = path.read_text(encoding="utf-8").split("\n" + MARKER, 1)[0].rstrip("\n") + "\n"
        graded = [(q, row[header.index(q)]) for q in manual_qs if row[header.index(q)].strip()]
        if graded or i in comments:
            lines = ["", MARKER, "", "## Graded by your instructor", ""]
            lines += [f"- {q}: {v} / {num(manual_qs[q])}" for q, v in graded]
            if i in comments:
                lines += ["", "Comment: " + comments[i]]
            text += "\n".join(lines) + "\n"
        path.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------- the command

def main(argv: list[str] | None = None) -> int:
    """``course manual DIR [FILLED.csv] [--gradebook CSV]``: 0 when done, 1 when the CSV has mistakes
    (nothing written), 2 on a bad command line."""
    p = argparse.ArgumentParser(prog="course manual",
                                description="Merge hand-graded points into a course grade output folder.")
    p.add_argument("out", type=Path, metavar="DIR", help="the --out folder of course grade")
    p.add_argument("filled", type=Path, nargs="?", metavar="FILLED.csv",
                   help="DIR/manual.csv (or a copy) with the points filled in")
    p.add_argument("--gradebook", type=Path, default=None,
                   help="the gradebook CSV from Canvas (or Moodle's grading worksheet): write "
                        "DIR/canvas_import.csv (moodle_import.csv) with the final points")
    p.add_argument("--gradebook-column", default=None, metavar="TEXT",
                   help="the gradebook's column for this assignment (default: the one naming it)")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if args.filled is None and args.gradebook is None:
        p.error("give FILLED.csv, --gradebook, or both")
    try:
        if args.filled is not None:
            for line in merge(args.out, args.filled):
                print(line)
        if args.gradebook is not None:
            for line in lms.export(args.out, args.gradebook, args.gradebook_column):
                print(line)
    except ManualError as exc:
        print(f"course manual: {exc}", file=sys.stderr)
        return 1
    except lms.GradebookError as exc:
        print(f"course manual: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
