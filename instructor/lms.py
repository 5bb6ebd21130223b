"""Grades back into the LMS: a Canvas gradebook import, or a Moodle grading worksheet.

Both LMSs take back, as an upload, a file of the form they export:

- **Canvas** (Grades -> Export -> CSV): columns ``Student, ID, SIS User ID, SIS Login ID, Section``
  (some courses have fewer, or an ``Integration ID``), then one per assignment titled
  ``Name (assignment id)``, then computed totals; a ``Points Possible`` row (and in newer exports a
  ``Manual Posting`` row) under the header; a BOM and ``;`` as separator where a spreadsheet saved
  it. Canvas's importer (``GradebookImporter``) finds the student by ``ID``, the assignment by the id
  in the column title, skips the ``Points Possible`` and posting rows, and changes only the cells
  that differ. ``canvas_import.csv`` therefore holds the student columns up to ``Section``, this
  assignment's column alone, the rows above the students, and only the students who have a graded
  submission here: every other grade in Canvas stays as it is (even one entered after the download).
- **Moodle** (Assignment -> View all submissions -> Download grading worksheet): ``Identifier``
  (``Participant 123``, the number in Moodle's bulk-download names), ``Grade``, ``Maximum Grade``
  ...; ``moodle_import.csv`` is the worksheet with ``Grade`` filled for the students graded here.

The student's id comes from the row's name (:func:`autograder.inputs.lms_id`: Canvas's bulk download
names files ``lastfirst_USERID_SUBMISSIONID_name``, Moodle ``Full Name_PARTICIPANT_assignsubmission_...``;
never from a name inside a student's zip). Canvas's ``Points Possible`` row is known by where it is
and what it lacks (a row above the students with no ``ID``), never by a student's name.
The points are ``final_points_earned`` (automatic plus hand-graded points, after ``course manual``).
A row whose hand-graded questions are not all graded is held (listed under ``HELD``, its gradebook
cell left as it is): its automatic points alone would write over a grade the gradebook may hold
already. ``--export-partial`` exports it with ``total_points_earned`` instead (it says so).

**One grade per student, never the best of several.** A student with several rows (an upload of
several notebooks, several uploads) gets a grade exported only when every row has the same points;
when they differ, or when some of that student's notebooks were not graded (over
:data:`autograder.inputs.MAX_STUDENT_NOTEBOOKS`), nothing is exported for that student (the
gradebook cell stays as it is) and the terminal lists the rows under ``HELD``, for the instructor
to decide. Exporting the best row would let one upload carry a guess per answer of a question and
keep whichever was right. A student with another week's notebook (``wrong notebook: ...``, not run)
is held the same way: a 0 in the gradebook would be a grade nobody gave; so is a student whose
upload nobody could read (``unreadable notebook: not valid JSON``, ``rejected upload: ...``: a
failed upload is just as uncertain). So is a student with a row
whose code the rules flagged (``suspicious code: ...``): its points wait for a person to read the code
(the Gradescope zip holds the same total, :func:`autograder.gradescope.results_json`).

**No cell runs as a formula.** The gradebook's own cells (a student's name, SIS login, section) are
copied through :func:`autograder.csvcells.text_cell`, so ``=HYPERLINK(...)`` opens as text in a
spreadsheet, except those the LMS reads back: Canvas's ``ID`` (its importer finds the student by it)
and Moodle's ``Identifier``, ``Grade``, ``Last modified (grade)`` and ``Feedback comments``
(``assignfeedback_offline_grade_importer``): an escaped name changes no match.

The grading run's ``--gradebook`` and ``--gradebook-column`` are kept in ``DIR/lms.json``
(:func:`remember`), so that ``course manual DIR FILLED.csv`` refreshes the import without being
told again (:func:`remembered`).
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from autograder import feedback, outdir
from autograder.csvcells import CsvRowError, cell_text, csv_text, read_spreadsheet, read_table, text_cell
from autograder.inputs import MAX_STUDENT_NOTEBOOKS, lms_id
from autograder.status import Status, kind_of

TITLE_AND_ID = re.compile(r"^(.*)\s\((\d+)\)$")
NON_ASSIGNMENT = re.compile(r"Current Score|Current Points|Current Grade|Final Score|Final Points|"
                            r"Final Grade|Override Score|Override Grade|Override Status")
SPECIAL_ROW = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)
PARTICIPANT = re.compile(r"(\d+)\s*$")
FEEDBACK_COMMENTS = "Feedback comments"   # Moodle's worksheet column of the comments feedback plugin
# the worksheet columns Moodle's import reads back (assignfeedback_offline_grade_importer): kept as they are
MOODLE_READS = {"Identifier", "Grade", "Last modified (grade)", FEEDBACK_COMMENTS}


class GradebookError(ValueError):
    """A gradebook file that is not one this module can fill in."""


@dataclass
class Gradebook:
    kind: str                      # "canvas" or "moodle"
    rows: list[list[str]]
    delimiter: str
    bom: bool
    id_col: int
    info_end: int = 0              # Canvas: the student columns are rows[..][:info_end]
    grade_col: int = -1            # Moodle: Grade
    max_col: int = -1              # Moodle: Maximum Grade

    @property
    def header(self) -> list[str]:
        return self.rows[0]


def read_gradebook(path: Path) -> Gradebook:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise GradebookError(f"cannot read the gradebook {path}: {exc.strerror}") from None
    try:
        rows, sep, bom = read_spreadsheet(raw)
    except CsvRowError as exc:
        raise GradebookError(f"{path} is {exc}") from None
    if not any(any(cell.strip() for cell in row) for row in rows):
        raise GradebookError(f"{path} is empty")
    header = [h.strip() for h in rows[0]]
    if len(header) > 3 and "Student" in header[0] and "ID" in header[1]:
        info_end = _section_end(header, path)
        return Gradebook("canvas", rows, sep, bom, id_col=1, info_end=info_end)
    if len(header) > 4 and header[:2] == ["LastName", "FirstName"] and "ID" in header[2]:
        return Gradebook("canvas", rows, sep, bom, id_col=2, info_end=_section_end(header, path))
    if "Identifier" in header and "Grade" in header:
        return Gradebook("moodle", rows, sep, bom, id_col=header.index("Identifier"),
                         grade_col=header.index("Grade"),
                         max_col=header.index("Maximum Grade") if "Maximum Grade" in header else -1)
    raise GradebookError(f"{path} is neither a Canvas gradebook export (first columns Student, ID, "
                         "..., Section) nor a Moodle grading worksheet (Identifier, ..., Grade)")


def _section_end(header: list[str], path: Path) -> int:
    for i, h in enumerate(header[:9]):
        if h == "Section":
            return i + 1
    raise GradebookError(f"{path}: no Section column among the first columns (Canvas's importer "
                         "needs the student columns as exported: Student, ID, ..., Section)")


def _norm(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def assignment_columns(gb: Gradebook) -> list[int]:
    return [i for i in range(gb.info_end, len(gb.header))
            if TITLE_AND_ID.match(gb.header[i].strip()) and not NON_ASSIGNMENT.search(gb.header[i])]


def choose_column(gb: Gradebook, name: str, wanted: str | None) -> int:
    """The Canvas column to fill: ``wanted`` (a title, part of one, or an assignment id), else the
    one whose title holds the assignment's name (``03_attention`` matches ``03 Attention (4711)``)."""
    cols = assignment_columns(gb)
    titles = {i: gb.header[i].strip() for i in cols}
    if wanted:
        found = [i for i in cols if titles[i] == wanted.strip()]
        # every column of cols matches TITLE_AND_ID (assignment_columns)
        found = found or [i for i in cols
                          if cast(re.Match, TITLE_AND_ID.match(titles[i])).group(2) == wanted.strip()]
        found = found or [i for i in cols if _norm(wanted) and _norm(wanted) in _norm(titles[i])]
    else:
        found = [i for i in cols if _norm(name) in _norm(titles[i])]
        tail = _norm(name.split("_", 1)[-1])
        found = found or [i for i in cols if tail and tail in _norm(titles[i])]
    if len(found) != 1:
        listing = "; ".join(titles[i] for i in cols) or "none"
        what = f"--gradebook-column {wanted!r}" if wanted else f"the assignment {name}"
        why = "matches several" if found else "matches none"
        raise GradebookError(f"{what} {why} of the gradebook's assignment columns ({listing}): "
                             "name one with --gradebook-column")
    return found[0]


def check_gradebook(path: Path, asg: Any, column: str | None) -> None:
    """Raise GradebookError now, before grading, for a gradebook that could not be filled in."""
    gb = read_gradebook(path)
    if gb.kind == "canvas":
        choose_column(gb, asg.name, column)


def fmt(points: float) -> str:
    """Points as Canvas shows them: at most two decimals (``12``, ``9.5``, ``0.67``)."""
    return f"{round(points, 2):.2f}".rstrip("0").rstrip(".")


Student = tuple[str, str]               # (lms, id)


def graded_rows(out: Path, table: list[list[str]] | None = None, hold_partial: bool = False
                ) -> tuple[dict[Student, tuple[float, str]], list[str], dict, dict[Student, str]]:
    """From ``out/grades.csv`` (or ``table``, its rows as they are about to be written): {(lms, id):
    (points, file)} to export, notes, questions.json, and {(lms, id): one line} of the students held
    for the instructor (:func:`one_grade`); ``hold_partial``: a row with hand-graded questions still
    open is held too (the import's default: its automatic points alone would replace a grade the
    gradebook may hold already), else exported with its automatic points only."""
    spec, table = _graded_table(out, table)
    rows = [dict(zip(table[0], r, strict=True)) for r in table[1:]]
    manual_qs = [q["name"] for q in spec["questions"] if q["manual"]]
    sorted_rows = _SortedRows()
    for row in rows:
        sorted_rows.add(row, manual_qs, hold_partial)
    chosen, held = sorted_rows.grades()
    return chosen, sorted_rows.notes(hold_partial), spec, held


def _graded_table(out: Path, table: list[list[str]] | None) -> tuple[dict, list[list[str]]]:
    """questions.json and the rows of grades.csv (``table`` if given) of an output folder, which
    must have the columns :func:`graded_rows` reads; GradebookError for anything else."""
    where = outdir.resolve(out)
    try:
        spec = json.loads((where / "questions.json").read_text(encoding="utf-8"))
        table = read_table(where / "grades.csv") if table is None else table
    except CsvRowError as exc:
        raise GradebookError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise GradebookError(f"{out} is not an output folder of course grade ({exc})") from None
    missing = {"file", "grading_status", "total_points_earned"} - set(table[0])
    if missing:
        raise GradebookError(f"{out / 'grades.csv'} has no column {', '.join(sorted(missing))}")
    return spec, table


@dataclass
class _SortedRows:
    """The rows of grades.csv as :func:`graded_rows` sorts them: per student, the points to export
    and the rows that hold the student back for the instructor (and why); the rows left out."""
    students: dict[Student, list[tuple[float, str]]] = field(default_factory=lambda: defaultdict(list))
    not_graded: dict[Student, list[str]] = field(default_factory=lambda: defaultdict(list))
    wrong: dict[Student, list[str]] = field(default_factory=lambda: defaultdict(list))
    flagged: dict[Student, list[str]] = field(default_factory=lambda: defaultdict(list))
    unreadable: dict[Student, list[str]] = field(default_factory=lambda: defaultdict(list))
    open_qs: dict[Student, list[str]] = field(default_factory=lambda: defaultdict(list))
    no_id: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    not_ok: list[str] = field(default_factory=list)

    def add(self, row: dict[str, str], manual_qs: list[str], hold_partial: bool) -> None:
        """One row: left out (no LMS id, to grade again), set aside (it holds its student), or its
        points (the final ones once hand-graded) for its student."""
        file = cell_text(row["file"])
        kind = kind_of(row.get("grading_status", ""))
        found = lms_id(file)
        if found is None:
            self.no_id.append(file)
            return
        if kind.regrade:
            self.skipped.append(file)
            return
        aside = self._aside(kind)
        if aside is not None:
            aside[found].append(file)
            return
        if kind is not Status.OK:
            self.not_ok.append(file)
        final = row.get("final_points_earned", "").strip()
        if final:
            self.students[found].append((float(final), file))
            return
        points = float(row["total_points_earned"])
        if manual_qs:                       # hand grading not done: automatic points only, or held
            self.partial.append(file)
            if hold_partial:
                waiting = [q for q in manual_qs if not str(row.get(q, "")).strip()]
                self.open_qs[found].append(f"{file} (hand grading not done: {', '.join(waiting)})")
                return
        self.students[found].append((points, file))

    def _aside(self, kind: Status) -> dict[Student, list[str]] | None:
        """Where a row of this status waits for the instructor, never exported; None: it exports."""
        if kind is Status.NOT_GRADED:         # over the per-student cap (autograder.inputs)
            return self.not_graded
        if kind is Status.WRONG_NOTEBOOK:
            return self.wrong
        if kind.flagged:
            return self.flagged
        if kind.unreadable:
            return self.unreadable
        return None

    def grades(self) -> tuple[dict[Student, tuple[float, str]], dict[Student, str]]:
        """{student: (points, file)} to export, and {student: the line saying why} of those held."""
        chosen: dict[Student, tuple[float, str]] = {}
        held: dict[Student, str] = {}
        for who in sorted(set(self.students) | set(self.not_graded) | set(self.wrong) | set(self.flagged)
                          | set(self.unreadable) | set(self.open_qs)):
            # a row set aside holds its student whatever the other rows say
            grade = (None if who in self.wrong or who in self.flagged or who in self.unreadable
                     or who in self.open_qs
                     else one_grade(self.students.get(who, []), self.not_graded.get(who, [])))
            if grade is None:
                held[who] = held_line(who, self.students.get(who, []), self.not_graded.get(who, []),
                                      self.wrong.get(who, []), self.flagged.get(who, []),
                                      self.unreadable.get(who, []), self.open_qs.get(who, []))
            else:
                chosen[who] = grade
        return chosen, held

    def notes(self, hold_partial: bool) -> list[str]:
        """What the instructor is told about the rows left out, held or exported as they are."""
        notes: list[str] = []
        if self.no_id:
            notes.append(f"{len(self.no_id)} rows have no Canvas or Moodle id in their name, left out "
                         f"(e.g. {self.no_id[0]})")
        if self.skipped:
            notes.append(f"{len(self.skipped)} rows to grade again are left out: "
                         f"{', '.join(self.skipped[:5])}")
        if self.partial and hold_partial:
            notes.append(f"{len(self.partial)} rows are held: their hand grading is not done (course "
                         "manual, course mark); their gradebook cells stay as they are until it is "
                         "(--export-partial exports their automatic points only)")
        elif self.partial:
            notes.append(f"{len(self.partial)} rows have no hand-graded points yet (course manual): "
                         "exported with their automatic points only")
        if self.not_ok:
            notes.append(f"{len(self.not_ok)} exported rows are not ok (see their grading_status), "
                         f"e.g. {self.not_ok[0]}")
        return notes


def one_grade(rows: list[tuple[float, str]], not_graded: list[str]) -> tuple[float, str] | None:
    """The one grade of a student's rows, or None when it is the instructor's to decide: several
    rows whose points differ (exporting the best would let one upload hold a guess per answer),
    or notebooks left ungraded (over the per-student cap). Rows of equal points export."""
    if not rows or not_graded or len({round(p, 6) for p, _ in rows}) > 1:
        return None
    return rows[0]


def held_line(who: Student, rows: list[tuple[float, str]], not_graded: list[str],
              wrong: Sequence[str] = (), flagged: Sequence[str] = (), unreadable: Sequence[str] = (),
              open_qs: Sequence[str] = ()) -> str:
    """One held student, for the terminal: the id and every row with its points."""
    parts = [f"{file} ({fmt(points)} points)" for points, file in sorted(rows, key=lambda t: t[1])]
    parts += [f"{file} (another week's notebook, not run)" for file in sorted(wrong)]
    parts += [f"{file} (an unreadable upload, not run)" for file in sorted(unreadable)]
    parts += [f"{file} (suspicious code: read it first)" for file in sorted(flagged)]
    parts += sorted(open_qs)                     # "FILE (hand grading not done: q3)"
    if not_graded:
        parts.append(f"{len(not_graded)} more notebooks not graded (over {MAX_STUDENT_NOTEBOOKS} from "
                     "one student)")
    return f"{who[0]} id {who[1]}: " + "; ".join(parts)


def export(out: Path, gradebook: Path, column: str | None = None, export_partial: bool = False) -> list[str]:
    """Write ``out/canvas_import.csv`` or ``out/moodle_import.csv``; the lines to print."""
    dest, data, lines = render(out, gradebook, column, export_partial=export_partial)
    outdir.write_files(out, {dest: data})
    return lines


def render(out: Path, gradebook: Path, column: str | None = None,
           table: list[list[str]] | None = None,
           pending: dict[Path, bytes | Path] | None = None,
           export_partial: bool = False) -> tuple[Path, bytes, list[str]]:
    """What :func:`export` writes, without writing it: (the import's path, its bytes, the lines to
    print); ``table``: grades.csv's rows as they are about to be written, ``pending``: other files
    about to be written (the feedback that goes into Moodle's "Feedback comments"); a row whose
    hand grading is not done is held unless ``export_partial``."""
    gb = read_gradebook(gradebook)
    best, notes, spec, held_by = graded_rows(out, table, hold_partial=not export_partial)
    possible = float(spec["auto_points"]) + sum(float(q["points"]) for q in spec["questions"] if q["manual"])
    mine = {i: v for (kind, i), v in best.items() if kind == gb.kind}
    held = [line for (kind, _i), line in held_by.items() if kind == gb.kind]
    other = [v[1] for (kind, _i), v in best.items() if kind != gb.kind]
    if other:
        notes.append(f"{len(other)} rows are named as another LMS names them, left out (e.g. {other[0]})")
    if gb.kind == "canvas":
        col = choose_column(gb, spec["assignment"], column)
        rows_out, filled, seen = _canvas(gb, col, mine, possible, notes)
        dest = out / "canvas_import.csv"
        what = f"column {gb.header[col].strip()!r}"
    else:
        rows_out, filled, seen = _moodle(gb, mine, possible, notes, comments_by_file(out, pending))
        dest = out / "moodle_import.csv"
        what = "column 'Grade'"
    missing = sorted(set(mine) - seen)
    if missing:
        notes.append(f"{len(missing)} graded students are not in the gradebook, left out: "
                     + ", ".join(f"{i} ({mine[i][1]})" for i in missing[:5]))
    text = csv_text(rows_out, delimiter=gb.delimiter)
    data = (("\ufeff" if gb.bom else "") + text).encode("utf-8")
    return dest, data, [f"{dest}: {filled} students' {what} filled in; import it into "
            f"{'Canvas (Grades -> Import)' if gb.kind == 'canvas' else 'Moodle (Upload grading worksheet)'}"
            ] + [f"note: {n}" for n in notes] + held_lines(held)


def feedback_rows(out: Path) -> list[tuple[str, str]]:
    """(row name, stem) of every graded row in ``out/results``: whose ``feedback/<stem>.*`` it is."""
    found = []
    for p in sorted((outdir.resolve(out) / "results").glob("*.json")):
        try:
            found.append((str(json.loads(p.read_text(encoding="utf-8"))["file"]), p.stem))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def pending_bytes(path: Path, pending: dict[Path, bytes | Path]) -> bytes | None:
    """``path``'s bytes as they are about to be written (``pending``: bytes, or a temporary file
    already written beside it), else as they are (read from OUT's grading: ``path`` is named as
    OUT's, :func:`autograder.outdir.locate`); None when there are none."""
    data = pending.get(path, None)
    if data is None:
        data = outdir.locate(path)
    if isinstance(data, bytes):
        return data
    try:
        return data.read_bytes()
    except OSError:
        return None


def comments_by_file(out: Path, pending: dict[Path, bytes | Path] | None = None) -> dict[str, str]:
    """{row name: its feedback as HTML, without the page around it}: Moodle's "Feedback comments"."""
    found = {}
    for file, stem in feedback_rows(out):
        data = pending_bytes(out / "feedback" / f"{stem}.md", pending or {})
        if data is not None:
            found[file] = feedback.body_html(data.decode("utf-8", errors="replace")).strip()
    return found


def held_lines(held: list[str]) -> list[str]:
    """The students whose grade is left to the instructor, every one of them listed."""
    if not held:
        return []
    return [f"HELD: {len(held)} students have several rows whose points differ (or notebooks not "
            "graded, another week's notebook, an unreadable upload, code the rules flagged, or hand "
            "grading not done): none is "
            "exported for them, their gradebook cells stay as they are; read their rows and enter the "
            "grade yourself:"
            ] + [f"  {line}" for line in held]


def student_names(path: Path) -> dict[tuple[str, str], str]:
    """{(lms, id): the student's name} from a gradebook: Canvas's ``Student`` column by ``ID``,
    Moodle's ``Full name`` by ``Participant N``; {} for a file that is not a gradebook."""
    try:
        gb = read_gradebook(path)
    except GradebookError:
        return {}
    header = [h.strip() for h in gb.header]
    names: dict[tuple[str, str], str] = {}
    for row in gb.rows[1:]:
        row = row + [""] * (len(header) - len(row))
        if gb.kind == "canvas":
            sid = row[gb.id_col].strip()
            name = (row[0] if header[0] != "LastName" else f"{row[0]}, {row[1]}").strip()
            if sid.isdigit() and name:
                names[("canvas", str(int(sid)))] = name
        elif "Full name" in header:
            m = PARTICIPANT.search(row[gb.id_col])
            name = row[header.index("Full name")].strip()
            if m and name:
                names[("moodle", str(int(m.group(1))))] = name
    return names


LMS_META = "lms.json"          # the grading run's --gradebook and --gradebook-column


def remember(out: Path, gradebook: Path | None, column: str | None) -> None:
    """Keep the gradebook (its absolute path) and column of this grading run in ``out/lms.json``."""
    path = out / LMS_META
    if gradebook is None:
        if (outdir.resolve(out) / LMS_META).exists():
            outdir.write_files(out, {path: None})
        return
    doc = {"gradebook": str(gradebook.resolve()), "gradebook_column": column}
    outdir.write_files(out, {path: (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")})


def remembered(out: Path) -> tuple[Path | None, str | None]:
    """The gradebook and column that :func:`remember` kept; (None, None) when there are none."""
    try:
        doc = json.loads((outdir.resolve(out) / LMS_META).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        raise GradebookError(f"{out / LMS_META} cannot be read ({exc})") from None
    book = doc.get("gradebook")
    return (Path(book) if book else None), doc.get("gradebook_column")


def _canvas(gb: Gradebook, col: int, mine: dict, possible: float,
            notes: list[str]) -> tuple[list[list[str]], int, set[str]]:
    keep = list(range(gb.info_end)) + [col]

    def cut(row: list[str]) -> list[str]:
        row = row + [""] * (len(gb.header) - len(row))
        return [row[i] for i in keep]

    out = [cut(gb.header)]
    seen: set[str] = set()
    filled = 0
    students = False                    # the rows above the first student are Canvas's own
    for row in gb.rows[1:]:
        if not any(c.strip() for c in row):
            continue
        first = row[0] if row else ""
        sid = row[gb.id_col].strip() if len(row) > gb.id_col else ""
        if not students and not sid and "Points Possible" in first:
            out.append(cut(row))
            try:
                canvas_points = float(cut(row)[-1].replace(",", "."))
            except ValueError:
                canvas_points = None
            if canvas_points is not None and abs(canvas_points - possible) > 1e-6:
                notes.append(f"Canvas gives this assignment {fmt(canvas_points)} points possible; the "
                             f"notebook is worth {fmt(possible)}: the points are exported as they are")
            continue
        if not sid and all(SPECIAL_ROW.match(c) for c in row if c is not None):
            out.append(cut(row))
            continue
        students = True
        if sid in mine:
            seen.add(sid)
            new = [cell if i == gb.id_col else text_cell(cell) for i, cell in enumerate(cut(row))]
            new[-1] = fmt(mine[sid][0])
            if "Points Possible" in new[0]:    # Canvas's importer would read it as its points row
                new[0] = new[0].replace("Points Possible", "Points_Possible")
                notes.append(f"the student {sid} is named with 'Points Possible': written as "
                             f"{new[0]!r} (Canvas finds students by ID)")
            out.append(new)
            filled += 1
    return out, filled, seen


def _moodle(gb: Gradebook, mine: dict, possible: float, notes: list[str],
            comments: dict[str, str] | None = None) -> tuple[list[list[str]], int, set[str]]:
    """The worksheet with ``Grade`` filled for the students in ``mine`` and, where the worksheet has
    the column (the assignment's feedback comments are on), ``Feedback comments`` with their
    feedback as HTML (``comments``: {row name: HTML}; :func:`comments_by_file`)."""
    comments = comments or {}
    header = [h.strip() for h in gb.header]
    comment_col = header.index(FEEDBACK_COMMENTS) if FEEDBACK_COMMENTS in header else -1
    if comment_col < 0 and comments and mine:
        notes.append(f"the worksheet has no {FEEDBACK_COMMENTS!r} column (feedback comments are off for "
                     "this assignment): hand back feedback/ another way")
    out = [gb.header]
    seen: set[str] = set()
    filled = 0
    warned = False
    for row in gb.rows[1:]:
        row = [cell if i < len(header) and header[i] in MOODLE_READS else text_cell(cell)
               for i, cell in enumerate(row + [""] * (len(gb.header) - len(row)))]
        m = PARTICIPANT.search(row[gb.id_col])
        pid = str(int(m.group(1))) if m else ""
        if pid in mine:
            seen.add(pid)
            row = list(row)
            row[gb.grade_col] = fmt(mine[pid][0])
            if comment_col >= 0 and mine[pid][1] in comments:
                row[comment_col] = comments[mine[pid][1]]
            filled += 1
            if gb.max_col >= 0 and not warned:
                try:
                    most = float(row[gb.max_col].replace(",", "."))
                except ValueError:
                    most = None
                if most is not None and abs(most - possible) > 1e-6:
                    notes.append(f"Moodle's maximum grade is {fmt(most)}; the notebook is worth "
                                 f"{fmt(possible)}: the points are exported as they are")
                    warned = True
        out.append(row)
    return out, filled, seen
