"""``course nbgrader ASSIGNMENT [--course-dir DIR]``: an nbgrader class graded by the course's engine.

The one command an nbgrader instructor runs instead of ``nbgrader autograde ASSIGNMENT``, from the
course directory (or with ``--course-dir``), after ``nbgrader collect``:

1. it reads every submission first, then runs ``nbgrader autograde ASSIGNMENT`` (unless
   ``--no-autograde``), which in this course runs none of the student's code
   (:class:`instructor.nbgrader.plugins.RunNothing`: the tests would run unsandboxed in nbgrader's
   kernel), so that nbgrader has its autograded notebooks and its gradebook rows: the formgrader,
   manual grading, feedback and ``nbgrader export`` keep working;
2. it grades every ``submitted/<student>/ASSIGNMENT/ASSIGNMENT.ipynb`` with the course's engine, the
   one ``course grade`` runs (each notebook in its own sandboxed process answering requests, the
   tests in a judge process, the rules read statically): the notebook is read in Otter's form
   (nbgrader's test cells, the course's own, become the ``grader.check("qN")`` cells they stand
   for; the cells autograde skips, grade id ``...-skipped``, are tagged ``otter_ignore``, the cells
   ``course grade`` skips; every other cell, the student's answers included, stays as submitted);
3. it writes each test cell's points from that verdict into nbgrader's gradebook
   (``nbgrader.api.Gradebook``): ``auto_score`` of every autograded grade cell (``qN-test_name``,
   or ``qN-tests`` for an all-or-nothing question) is what the judge gave, replacing what the
   tests computed in the student's kernel. Hand-graded cells and scores you entered by hand are
   left alone. A row whose code the rules flagged (``suspicious code: ...``) is held, as the
   gradebook import and the Gradescope total hold it: its cells get 0 and *needs manual grade*,
   so that ``nbgrader export`` carries nothing nobody has read, and its points are printed.

So formgrader and ``nbgrader export`` show the engine's scores; per question they are ``course
grade``'s (``tests/instructor/test_nbgrader_grading.py``). The engine's own output (``grades.csv``, each row's
status, ``report.html``) goes to ``DIR/course-grade/ASSIGNMENT/``; a row that is not ``ok``
(``tampering detected``, ``suspicious code``, a cell timeout) is also printed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

from autograder import api
from autograder.config import SANDBOX_MODES, GradeConfig, GradingError, SandboxMode, default_workers

from .commands import nbgrader, nbgrader_env
from .plugins import is_skipped, question_of

IGNORE_TAG = "otter_ignore"        # the tag of the cells the engine skips (autograder/notebook.py)
GRADED_AS = "course-grade"          # DIR/course-grade/ASSIGNMENT/: the engine's output folder
# SQLAlchemy's warning about nbgrader's own add_submission (an autoflush while it builds the rows);
# harmless, and not the instructor's to act on: kept out of the output, here and in autograde's
SA_NOISE = "Object of type <SubmittedAssignment> not in session"


def is_test_cell(cell) -> bool:
    """An nbgrader autograder-tests cell: graded, not an answer (the course's tests)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def otter_form(nb):
    """A submitted nbgrader notebook as the engine reads a student notebook: each question's test
    cells become its one ``grader.check("qN")`` cell (in the place of the first); every other cell
    stays as submitted, except that the engine skips exactly the cells nbgrader's autograde skips.

    The source notebook marks the cells ``course grade`` skips (``otter_ignore`` in the master:
    training runs and what is made from them) by a grade id ending in ``-skipped`` and does not
    keep the tag; the engine skips by the tag, so it is set here from the grade id (and taken off
    any other cell). Otherwise the engine would run those cells and its rules would read them, which
    no other route does."""
    import copy

    import nbformat

    nb = copy.deepcopy(nb)
    cells, seen = [], set()
    for cell in nb.cells:
        if is_test_cell(cell):
            q = question_of(cell.metadata["nbgrader"]["grade_id"])
            if q not in seen:
                seen.add(q)
                cells.append(nbformat.v4.new_code_cell(f'grader.check("{q}")', id=cell.get("id")))
            continue
        if cell.get("cell_type") == "code":
            _mark_skipped(cell, is_skipped(cell))
        cells.append(cell)
    nb.cells = cells
    return nb


def _mark_skipped(cell, skipped: bool) -> None:
    """Tag ``cell`` ``otter_ignore`` (the engine does not run it, its rules do not read it) exactly
    when ``skipped``."""
    meta = cell.setdefault("metadata", {})
    tags = meta.get("tags") if isinstance(meta.get("tags"), list) else []
    tags = [t for t in tags if t != IGNORE_TAG] + ([IGNORE_TAG] if skipped else [])
    if tags:
        meta["tags"] = tags
    else:
        meta.pop("tags", None)


def stage(root: Path, assignment: str, folder: Path) -> dict[str, str]:
    """Every submitted notebook of ``assignment`` in Otter's form as ``folder/<student>.ipynb``;
    returns {row file name: student id}."""
    import nbformat

    rows = {}
    for path in sorted((root / "submitted").glob(f"*/{assignment}/{assignment}.ipynb")):
        student = path.parent.parent.name
        try:
            nb = nbformat.read(path, as_version=4)
            nbformat.write(otter_form(nb), folder / f"{student}.ipynb")
        except Exception:                          # unreadable: the engine says so in its row
            shutil.copyfile(path, folder / f"{student}.ipynb")
        rows[f"{student}.ipynb"] = student
    return rows


def grade_ids(question, case_name: str) -> str:
    return f"{question.name}-tests" if question.all_or_nothing else f"{question.name}-{case_name}"


def write_gradebook(db_url: str, assignment: str, asg, results: list, students: dict[str, str]) -> list[str]:
    """The judge's points into nbgrader's gradebook (see the module's docstring); returns what it did."""
    from nbgrader.api import Gradebook, MissingEntry

    done = []
    questions = {q.name: q for q in asg.auto}
    warnings.filterwarnings("ignore", message=SA_NOISE)
    with Gradebook(db_url) as gb:
        for r in results:
            student = students.get(r.file)
            if student is None:
                continue
            try:
                gb.find_submission(assignment, student)
            except MissingEntry:                       # --no-autograde before any autograde
                gb.update_or_create_student(student)
                gb.add_submission(assignment, student)
            points: dict[str, float] = {}
            for c in r.cases:
                q = questions.get(c.question)
                if q is not None:
                    gid = grade_ids(q, c.name)
                    points[gid] = points.get(gid, 0.0) + float(c.points)
            written = 0
            held = r.grading.kind.flagged       # its points wait for a person, as on every platform
            for q in asg.auto:
                ids = [f"{q.name}-tests"] if q.all_or_nothing else [f"{q.name}-{c.name}" for c in q.cases]
                for gid in ids:
                    try:
                        grade = gb.find_grade(gid, assignment, assignment, student)
                    except MissingEntry:
                        continue
                    grade.auto_score = 0.0 if held else points.get(gid, 0.0)   # not run: nothing earned
                    grade.needs_manual_grade = held
                    written += 1
            _name_mistakes(gb, assignment, student, r)
            gb.db.commit()
            if held:
                done.append(f"HELD {student}: {r.total:g} / {asg.max_points:g} automatic points not written "
                            f"({written} cells at 0, marked for manual grading in the formgrader), "
                            f"{r.status}")
                continue
            done.append(f"{student}: {r.total:g} / {asg.max_points:g} automatic points ({written} cells)"
                        + ("" if r.grading.ok else f", {r.status}"))
    return done


def _name_mistakes(gb, assignment: str, student: str, r) -> None:
    """The named mistakes of each question (:mod:`autograder.mistakes`) as the automatic comment of
    its first answer cell (``qN-answer``), which nbgrader's feedback shows beside the answer."""
    from nbgrader.api import MissingEntry

    by_question: dict[str, list[str]] = {}
    for m in r.mistakes:
        by_question.setdefault(m.question, []).append(f"The mistake, named: {m.sentence}.")
    for q, lines in by_question.items():
        try:
            comment = gb.find_comment(f"{q}-answer", assignment, assignment, student)
        except MissingEntry:
            continue
        comment.auto_comment = "\n".join(lines)


class AutogradeFailed(GradingError):
    """``nbgrader autograde`` itself failed (exit 1): nothing was written to the gradebook."""

    exit_code = 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="course nbgrader", description=__doc__.split("\n")[0])
    p.add_argument("assignment", help="NN_name, as in nbgrader's source/ folder")
    p.add_argument("--course-dir", type=Path, default=Path("."), help="nbgrader's course directory")
    p.add_argument("--no-autograde", action="store_true",
                   help="do not run `nbgrader autograde` first (it already ran)")
    p.add_argument("--workers", type=int, default=default_workers())
    p.add_argument("--sandbox", choices=SANDBOX_MODES, default="auto")
    args = p.parse_args(argv)
    try:
        lines = grade_course(args.course_dir.resolve(), args.assignment, workers=args.workers,
                             sandbox=args.sandbox, autograde=not args.no_autograde)
    except GradingError as exc:
        print(f"course nbgrader: {exc}", file=sys.stderr)
        return exc.exit_code
    for line in lines:
        print(line)
    return 0


def grade_course(root: Path, name: str, *, workers: int, sandbox: SandboxMode, autograde: bool) -> list[str]:
    """``course nbgrader``: the class of ``name`` in the course directory ``root`` graded (see the
    module's docstring); returns what it did, a line a student. Raises GradingError."""
    asg = api.load_assignment(name)
    db = root / "gradebook.db"
    if not (root / "submitted").is_dir():
        raise GradingError(f"no submitted/ in {root} (run `nbgrader collect {name}` first)")
    # The submissions are read before anything else runs (nothing of a student's runs outside the
    # engine's sandbox: the course's autograde runs none of their code, see nbgrader_config.py).
    staging = Path(tempfile.mkdtemp(prefix="course-nbgrader-"))
    os.chmod(staging, 0o700)
    try:
        config = GradeConfig(submissions=(staging,), assignment=name, out=root / GRADED_AS / name,
                             workers=workers, sandbox=sandbox, progress=False)
        students = stage(root, name, staging)
        if not students:
            raise GradingError(f"no submitted/*/{name}/{name}.ipynb in {root}")
        if autograde:
            env = {k: v for k, v in nbgrader_env(root).items() if k != "COURSE_NBGRADER_KERNEL"}
            env["PYTHONWARNINGS"] = ",".join(filter(None, [env.get("PYTHONWARNINGS"), f"ignore:{SA_NOISE}"]))
            done = nbgrader(root, "autograde", name, env=env)
            sys.stderr.write(done.stderr[-20000:])
            if done.returncode != 0:
                raise AutogradeFailed(f"`nbgrader autograde {name}` failed (exit {done.returncode})")
        if not db.exists():
            raise GradingError(f"no gradebook.db in {root} (run `nbgrader autograde {name}` first)")
        outcome = api.grade(config)
        api.say(outcome)
        api.warn(outcome)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return write_gradebook(f"sqlite:///{db}", name, asg, outcome.results, students) + [
        f"gradebook: the automatic scores of {len(students)} submission(s) of {name} are the engine's "
        f"(sandbox: {outcome.mode}); formgrader and `nbgrader export` show them"]


if __name__ == "__main__":
    sys.exit(main())
