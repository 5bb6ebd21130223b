"""The nbgrader side of the course: what `nbgrader_config.py` plugs into nbgrader.

`course build` writes this file into the course directory as `nbgrader/nbgrader_plugins.py` (not
committed there: this is its one source), next to the course's `nbgrader_config.py`, which imports
it. It needs nbgrader only (not the course package), so it works in the instructor's nbgrader
wherever the course folder is copied.

- `SkipUngraded`: nbgrader's Execute, except that cells whose grade_id ends in `-skipped` are not
  run by `nbgrader autograde` (the cells `course grade` skips: long training runs, tagged
  `otter_ignore` in the masters). Test cells always run, whatever their grade_id says.
- `RunNothing`: what `nbgrader autograde` runs in this course by default: nothing. The student's
  code never runs in nbgrader's kernel (it would run unsandboxed, in the instructor's account, in
  the course directory: it could rewrite its own or a classmate's submission, the gradebook, or
  print the source notebook into its feedback). Each test cell gets an error output saying so, so
  nbgrader records 0 until `course nbgrader` writes the engine's scores. The comparison benchmark
  sets `COURSE_NBGRADER_KERNEL=1` to measure nbgrader's own in-kernel autograde (`SkipUngraded`).
- `KeepStudentOutputs`: with `RunNothing`, nbgrader's ClearOutput for the test cells only: the
  other cells keep the outputs the student saved (what you grade plots from in the formgrader).
- `KeepSkippedOutputs`: nbgrader's ClearOutput, except that the skipped cells keep the outputs the
  student's notebook came with, so that the plots you grade by hand are the student's own.
- `OverwriteReleasedCells`: nbgrader's OverwriteCells, comparing a locked cell with the text its
  students were given (hidden tests removed) rather than with the source (hidden tests included),
  so an honest student's test cells raise no "Attribute 'checksum' ... has changed!" warning; an
  edited locked cell is still reported and put back.
- `QuestionCsvExport`: `nbgrader export` with one column per question (q1, q2, ...) after nbgrader's
  usual columns: the points of the question's grade cells (grade_ids `qN-...`) added up.
  A question graded by hand is empty until you grade it (0 when the student left it blank).
"""
from __future__ import annotations

import csv
import re

from nbformat.v4 import new_output
from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin
from nbgrader.preprocessors import ClearOutput, Execute, NbGraderPreprocessor, OverwriteCells

SKIPPED = "-skipped"


def is_skipped(cell) -> bool:
    """A cell nbgrader autograde does not run: grade_id `...-skipped`, and not a test cell."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    test_cell = meta.get("grade", False) and not meta.get("solution", False)
    return str(meta.get("grade_id", "")).endswith(SKIPPED) and not test_cell


def question_of(grade_id: str) -> str:
    """`q3-test_hot_and_cold` -> `q3`."""
    return grade_id.split("-", 1)[0]


def _natural(name: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


class SkipUngraded(Execute):
    """nbgrader's Execute, skipping the cells `course grade` skips (see the module's docstring)."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and is_skipped(cell):
            self.log.info("Not running cell %s (%s)", index, cell.metadata.nbgrader["grade_id"])
            return cell, resources
        return super().preprocess_cell(cell, resources, index)


NOT_RUN = ("not run in nbgrader's kernel: `course nbgrader` grades this notebook with the course's "
           "engine and writes this cell's score")


class RunNothing(NbGraderPreprocessor):
    """Autograde without running the student's code (see the module's docstring). An nbgrader
    preprocessor: nbconvert's own are disabled unless configured, which would leave the test cells
    without outputs, and nbgrader scores a test cell without an error as passed."""

    def preprocess_cell(self, cell, resources, index):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            cell.outputs = [new_output("error", ename="NotRun", evalue=NOT_RUN, traceback=[NOT_RUN])]
            cell.execution_count = None
        return cell, resources


class KeepStudentOutputs(ClearOutput):
    """With `RunNothing`: every cell keeps the outputs the student's notebook came with (the plots you
    grade by hand are the student's own, drawn in the student's kernel), except the test cells."""

    def preprocess_cell(self, cell, resources, cell_index):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            return super().preprocess_cell(cell, resources, cell_index)
        return cell, resources


class KeepSkippedOutputs(ClearOutput):
    """nbgrader's ClearOutput, keeping the outputs of the cells that autograde does not run."""

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and is_skipped(cell):
            return cell, resources
        return super().preprocess_cell(cell, resources, cell_index)


def released_text(source: str) -> str:
    """A test cell's text as students get it: nbgrader's ClearHiddenTests applied to the source."""
    from nbformat import NotebookNode
    from nbgrader.preprocessors import ClearHiddenTests

    cell = NotebookNode({"cell_type": "code", "source": source, "metadata": {}})
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


class OverwriteReleasedCells(OverwriteCells):
    """nbgrader's OverwriteCells, comparing a locked cell with the text its students were given.

    nbgrader keeps each source cell's checksum with its hidden tests, and compares it with the
    submitted cell, whose hidden tests `generate_assignment` removed: every honest student's hidden
    test cells were reported as changed (`Attribute 'checksum' for cell q1-... has changed!`, nine
    times per student on 03), the message that otherwise means an edited locked cell. Here a
    locked cell that is exactly as released gets its source (hidden tests included) back first, so
    nbgrader's check passes quietly; a cell the student edited is reported and put back as before."""

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source_cell = None
            if source_cell is not None and source_cell.locked and cell.source != source_cell.source \
                    and cell.source == released_text(source_cell.source):
                cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, cell_index)


def question_scores(gradebook, assignment: str, student: str) -> dict[str, float | None]:
    """{question: points} of one submission; None for a question that waits for your hand grade."""
    submission = gradebook.find_submission(assignment, student)
    scores: dict[str, float] = {}
    pending: set[str] = set()
    for notebook in submission.notebooks:
        for grade in notebook.grades:
            q = question_of(grade.name)
            if grade.manual_score is None and grade.auto_score is None:
                pending.add(q)
                continue
            earned = grade.manual_score if grade.manual_score is not None else grade.auto_score
            scores[q] = scores.get(q, 0.0) + float(earned)
    return {**scores, **{q: None for q in pending}}


def questions(gradebook, assignment: str) -> list[str]:
    """The questions of an assignment, from its grade cells, in natural order (q2 before q10)."""
    found = {question_of(c.name) for nb in gradebook.find_assignment(assignment).notebooks
             for c in nb.grade_cells}
    return sorted(found, key=_natural)


class QuestionCsvExport(CsvExportPlugin):
    """nbgrader's CSV export plus one column per question (see the module's docstring)."""

    KEYS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
            "raw_score", "late_submission_penalty", "score", "max_score"]

    def export(self, gradebook) -> None:
        dest = self.to or "grades.csv"
        wanted_assignments = [str(a) for a in self.assignment]
        wanted_students = [str(s) for s in self.student]
        self.log.info("Exporting grades, one column per question, to %s", dest)
        assignments = [a for a in gradebook.assignments
                       if not wanted_assignments or a.name in wanted_assignments]
        own = {a.name: questions(gradebook, a.name) for a in assignments}
        columns = sorted({q for qs in own.values() for q in qs}, key=_natural)
        with open(dest, "w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(self.KEYS + columns)
            for assignment in assignments:
                for student in gradebook.students:
                    if wanted_students and student.id not in wanted_students:
                        continue
                    row = {"assignment": assignment.name, "duedate": assignment.duedate,
                           "student_id": student.id, "last_name": student.last_name,
                           "first_name": student.first_name, "email": student.email,
                           "max_score": assignment.max_score}
                    try:
                        submission = gradebook.find_submission(assignment.name, student.id)
                    except MissingEntry:
                        row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0, score=0.0)
                        scores = {}
                    else:
                        penalty = submission.late_submission_penalty
                        row.update(timestamp=submission.timestamp, raw_score=submission.score,
                                   late_submission_penalty=penalty,
                                   score=max(0.0, submission.score - penalty))
                        scores = question_scores(gradebook, assignment.name, student.id)
                    cells = ["" if row[k] is None else str(row[k]) for k in self.KEYS]
                    cells += ["" if q not in own[assignment.name] or scores.get(q) is None
                              else f"{scores[q]:g}" for q in columns]
                    out.writerow(cells)
