"""Realistic LMS files for the tests: a Canvas gradebook export, a Moodle grading worksheet, and a
reader that takes a Canvas import back the way Canvas's own importer does (``GradebookImporter`` in
canvas-lms, lib/gradebook_importer.rb: the header check, the student columns up to ``Section``,
assignment columns titled ``Name (id)``, the ``Points Possible`` and posting rows, students found by
``ID``, ``;`` or ``,`` chosen from the first lines, numbers with a decimal comma normalised)."""
from __future__ import annotations

import csv
import io
import re

TOTALS = ["Assignments Current Points", "Assignments Final Points", "Assignments Current Score",
          "Assignments Unposted Current Score", "Assignments Final Score", "Assignments Unposted Final Score",
          "Current Points", "Final Points", "Current Score", "Unposted Current Score", "Final Score",
          "Unposted Final Score", "Current Grade", "Unposted Current Grade", "Final Grade",
          "Unposted Final Grade"]


def canvas_gradebook(students: list[tuple[str, str, str, str, str]], toy_points: str = "6.00",
                     manual_posting: bool = True, bom: bool = True, sep: str = ",") -> bytes:
    """As Canvas exports it (Grades -> Export -> Export Entire Gradebook): ``students`` are
    (name, id, sis user id, sis login id, section); 01 is graded already, 00 Toy is empty."""
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "01 No talking (4701)",
              "00 Toy (4700)", "Quiz 1 (4702)"] + TOTALS
    rows = [header]
    if manual_posting:
        rows.append(["", "", "", "", "", "", "Manual Posting", ""] + [""] * len(TOTALS))
    rows.append(["    Points Possible", "", "", "", "", "11.00", toy_points, "5.00"]
                + ["(read only)"] * len(TOTALS))
    for k, (name, uid, sis, login, section) in enumerate(students):
        rows.append([name, uid, sis, login, section, f"{7 + k}.00", "", "4.00"] + ["0"] * len(TOTALS))
    buf = io.StringIO()
    csv.writer(buf, delimiter=sep, lineterminator="\r\n").writerows(rows)
    return (b"\xef\xbb\xbf" if bom else b"") + buf.getvalue().encode("utf-8")


STUDENTS = [("Smith, Alice", "10101", "S10101", "asmith", "Section A"),
            ("Jones, Bob", "10202", "S10202", "bjones", "Section A"),
            ("Lee, Carol", "10303", "S10303", "clee", "Section B"),
            ("Week, Wrong", "55555", "S55555", "wweek", "Section B"),
            ("Student, Test", "99999", "", "", "Section A")]


def moodle_worksheet(participants: list[tuple[str, str]], maximum: str = "6.00") -> bytes:
    header = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
              "Grade can be changed", "Last modified (submission)", "Last modified (grade)",
              "Feedback comments"]
    rows = [header] + [[f"Participant {pid}", name, f"{pid}@example.org", "Submitted for grading", "",
                        maximum, "Yes", "Monday, 1 December 2025, 10:00 AM", "-", ""]
                       for pid, name in participants]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


def _canvas_delimiter(text: str) -> str:
    """``;`` when it splits the first three records (a CSV reader's, ended by \r or \n only) into
    the same, larger, number of fields."""
    counts = {}
    for sep in (";", ","):
        records = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=sep) if "".join(r).strip()]
        sizes = {len(r) for r in records[:3]}
        counts[sep] = sizes.pop() if len(sizes) == 1 else 0
    return ";" if counts[";"] > counts[","] else ","


def canvas_import(data: bytes) -> dict:
    """What Canvas's importer reads in an import file: {"assignments": {id: title}, "points":
    {id: points possible}, "grades": {(user id, assignment id): grade}}; raises ValueError where
    Canvas reports an invalid header."""
    text = data.decode("utf-8-sig")
    sep = _canvas_delimiter(text)
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=sep)
            if not re.fullmatch(r"[;, ]*", sep.join(r))]
    header = rows[0]
    if not (len(header) > 3 and "Student" in header[0] and "ID" in header[1]):
        raise ValueError("Invalid header row")
    n = 3
    if re.search(r"SIS\s+Login\s+ID", header[n - 1]):
        n += 1
    elif re.search(r"SIS\s+User\s+ID", header[n - 1]) and re.search(r"SIS\s+Login\s+ID", header[n]):
        extra = 1 if re.search(r"Integration\s+ID", header[n + 1]) else 0
        n += 2 + extra
    if "Section" not in header[n - 1]:
        raise ValueError("Invalid header row")
    non_assignment = re.compile("Current Score|Current Points|Current Grade|Final Score|Final Points|"
                                "Final Grade|Override Score|Override Grade|Override Status")
    assignments = {}
    for i, title in enumerate(header[n:], n):
        if non_assignment.search(title):
            continue
        m = re.fullmatch(r"(.*)\s\((\d+)\)", title)
        if not m:
            raise ValueError(f"a new assignment would be created: {title!r}")
        assignments[i] = m.group(2)
    out = {"assignments": {a: header[i] for i, a in assignments.items()}, "points": {}, "grades": {}}
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            out["points"] = {a: row[i] for i, a in assignments.items()}
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.IGNORECASE) for c in row):
            continue
        for i, a in assignments.items():
            grade = row[i].strip()
            if re.fullmatch(r"-?[0-9.,]+%?", grade):
                *head, last = re.split(r"[,.]", grade)
                grade = "".join(head) + "." + last if head else last
            out["grades"][(row[1], a)] = grade
    return out
