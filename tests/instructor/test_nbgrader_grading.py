"""nbgrader's real commands on a scratch copy of the built course directory, against `course grade`.

One scratch course for a sample of the masters (all of them with COURSE_NBGRADER_NOTEBOOKS=all):
`nbgrader generate_assignment` for each notebook, `nbgrader validate` on each released (blank)
notebook, then for each notebook the solution, the blank and mutants
(autograder/assignments/NN_name/mutants/) submitted as students would, `nbgrader autograde` once per
notebook and `nbgrader export` once. The same answers, in Otter's form, go through `course grade`;
the points of every question must come out the same. Slow (minutes): marked `slow`.
"""
from __future__ import annotations

import csv
import os
import re

import nbformat
import pytest

from autograder.assignment import load
from benchmarks.nbgrader_grading import SUBMITTED_OUTPUT, comparison, grade_both, nbgrader_points
from instructor.build import masters

pytestmark = pytest.mark.e2e
# A sample of the notebooks by default (nbgrader's generate and autograde cost about a minute a
# notebook); COURSE_NBGRADER_NOTEBOOKS=all compares all of them, as benchmarks/nbgrader_grading.py does.
SAMPLE = ("01_no_talking", "03_attention", "06_block", "09_gpt")
NAMES = masters() if os.environ.get("COURSE_NBGRADER_NOTEBOOKS") == "all" else [
    n for n in masters() if n in os.environ.get("COURSE_NBGRADER_NOTEBOOKS", " ".join(SAMPLE)).split()]
EDITED = "03_attention" if "03_attention" in NAMES else NAMES[0]     # where a GIVEN cell is edited


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    return grade_both(NAMES, tmp_path_factory.mktemp("nbgrader"), fail=1, passing=1, edited=EDITED,
                      feedback=(EDITED,), groups=2)


def _auto(name: str) -> list:
    return load(name).auto


def test_generate_assignment_for_each_notebook(run):
    for name in NAMES:
        r = run["generate"][name]
        assert r.returncode == 0, f"{name}:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
        folder = run["roots"][name] / "release" / name
        assert (folder / f"{name}.ipynb").is_file()
        assert (folder / "course" / "handles.py").is_file(), "the course package goes with the notebook"


def test_hidden_tests_never_released(run):
    for name in NAMES:
        text = (run["roots"][name] / "release" / name / f"{name}.ipynb").read_text()
        assert "HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text
        released = nbformat.read(run["roots"][name] / "release" / name / f"{name}.ipynb", as_version=4)
        sources = "\n".join(c.source for c in released.cells)
        cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in released.cells}
        for q in _auto(name):
            for case in q.cases:
                if not case.hidden:
                    continue
                assert f"def {case.name}(" not in text, f"{name}: hidden test {case.name} released"
                if case.failure_message:
                    assert case.failure_message not in sources, f"{name}: {case.name}'s message released"
                cell = cells.get(f"{q.name}-{case.name}") or cells.get(f"{q.name}-tests")
                assert cell is not None
                if f"{q.name}-tests" not in cells:
                    assert [line for line in cell.source.splitlines() if line.strip()] == \
                        [cell.source.splitlines()[0]], f"{name}: {case.name} keeps more than its header"


def test_blank_notebook_fails_validate(run):
    for name in NAMES:
        r = run["validate"][name]
        assert "VALIDATION FAILED" in r.stdout, f"{name}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        assert "Success!" not in r.stdout


def test_autograde_and_export_ran(run):
    for name, r in run["autograde"].items():
        assert r.returncode == 0, f"{name}:\n{r.stderr[-4000:]}"
        assert "There was an error" not in r.stderr, f"{name}:\n{r.stderr[-4000:]}"
    for name, r in run["export"].items():
        assert r.returncode == 0, f"{name}:\n{r.stderr[-3000:]}"


def test_solution_gets_full_automatic_marks(run):
    for name in NAMES:
        got = nbgrader_points(run, name, "solution")
        for q in _auto(name):
            assert got[q.name] == pytest.approx(q.max_points), f"{name} {q.name}: {got}"
        row = run["nbgrader_rows"][(name, "solution")]
        assert float(row["score"]) == pytest.approx(load(name).max_points)


def test_blank_gets_zero(run):
    for name in NAMES:
        got = nbgrader_points(run, name, "blank")
        assert all(v in (0.0, None) for v in got.values()), f"{name}: {got}"
        assert float(run["nbgrader_rows"][(name, "blank")]["score"]) == 0.0


def test_manual_questions_wait_for_the_instructor(run):
    for name in NAMES:
        got = nbgrader_points(run, name, "solution")
        for q in load(name).questions:
            if q.manual:
                assert got[q.name] is None, f"{name} {q.name}: an answer to read by hand got {got[q.name]}"


def test_nbgrader_export_equals_course_grade_per_question(run):
    rows = comparison(run)
    assert {r["notebook"] for r in rows} == set(NAMES)
    for name in NAMES:
        mutants = [r for r in rows if r["notebook"] == name and r["submission"] not in ("solution", "blank")]
        assert len(mutants) >= 2, f"{name}: only {len(mutants)} mutants"
    different = [r for r in rows if not r["same"]]
    assert not different, "\n".join(f"{r['notebook']} {r['submission']}: {r['questions']}" for r in different)
    assert all(r["status"] == "ok" for r in rows), [r for r in rows if r["status"] != "ok"]


def test_mutants_lose_points_where_expected(run):
    for name, labels in run["labels"].items():
        for label, mutant in labels.items():
            if mutant is None:
                continue
            got = nbgrader_points(run, name, label)
            lost = sorted(q.name for q in _auto(name) if got[q.name] < q.max_points - 1e-9)
            assert lost == ([mutant.question] if mutant.expect == "fail" else []), f"{name} {label}: {lost}"


def test_edited_given_cell_is_reported_and_undone(run):
    grade_id, original = run["edited"]
    log = run["autograde"][EDITED].stderr
    assert re.search(rf"Attribute 'checksum' for cell {re.escape(grade_id)} has changed", log), log[-3000:]
    graded = nbformat.read(run["roots"][EDITED] / "autograded" / "given-edited" / EDITED / f"{EDITED}.ipynb",
                           as_version=4)
    cell = next(c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    assert cell.source == original
    assert nbgrader_points(run, EDITED, "given-edited") == nbgrader_points(run, EDITED, "solution")


def test_export_has_a_column_per_question(run):
    exports = sorted(run["scratch"].glob("course-*.csv"))
    assert exports
    seen = set()
    for export in exports:
        with open(export, newline="") as f:
            header = next(csv.reader(f))
        assert header[:11] == ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
                               "email", "raw_score", "late_submission_penalty", "score", "max_score"]
        seen |= set(header[11:])
    for name in NAMES:
        assert {q.name for q in load(name).questions} <= seen


def test_feedback_shows_hidden_tests_only_as_their_hint(run):
    r = run["feedback"][EDITED]
    assert r.returncode == 0, r.stderr[-3000:]
    hidden = [c for q in load(EDITED).auto for c in q.cases if c.hidden]
    for label, mutant in run["labels"][EDITED].items():
        page = run["roots"][EDITED] / "feedback" / label / EDITED / f"{EDITED}.html"
        text = page.read_text(encoding="utf-8")
        for case in hidden:
            assert f"def {case.name}(" not in text, f"{label}: hidden test {case.name} in the feedback"
        if mutant is not None and mutant.expect == "fail":
            assert "Check failed" in text


def test_skipped_cells_are_not_run_and_keep_the_students_outputs(run):
    for name in NAMES:
        graded = nbformat.read(run["roots"][name] / "autograded" / "solution" / name / f"{name}.ipynb",
                               as_version=4)
        for cell in graded.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade_id", "").endswith("-skipped"):
                assert [o.get("text") for o in cell.outputs] == [SUBMITTED_OUTPUT], (name, meta["grade_id"])


# ---------------------------------------------------------------- the scores of record: `course nbgrader`

ENGINE_NB = "03_attention"


@pytest.fixture(scope="module")
def engine_class(tmp_path_factory) -> dict:
    """An nbgrader class of 03 graded with the one command: six honest students (the solution, the
    blank, two wrong answers, a right alternative and a named mistake) and an attack that replaces
    `course.handles.close`, submitted as nbgrader's collect leaves them; `course nbgrader
    03_attention --course-dir DIR` (nbgrader autograde, then the engine's points into the
    gradebook), `nbgrader export`; the same answers in Otter's form through `course grade`."""
    import subprocess
    import sys

    import forgery

    from autograder.mutants import grade_folder, load_mutants, mutant_notebook, solution_notebook
    from benchmarks.nbgrader_class import filled_notebook, pick_mutants, read_export, submit
    from benchmarks.nbgrader_class import mutant_notebook as nbgrader_mutant
    from instructor.build import NOTEBOOKS, ROOT
    from instructor.nbgrader.commands import nbgrader, nbgrader_env
    from instructor.nbgrader.export import build_nbgrader
    from instructor.nbgrader.source import source_notebook

    name = ENGINE_NB
    scratch = tmp_path_factory.mktemp("nbgrader-engine")
    root = scratch / "course"
    build_nbgrader([name], out=root)
    env = nbgrader_env(root)
    generated = nbgrader(root, "generate_assignment", name, env=env)
    assert generated.returncode == 0, generated.stderr[-3000:]
    released = nbformat.read(root / "release" / name / f"{name}.ipynb", as_version=4)
    filled = filled_notebook(released, source_notebook(name)[1])
    otter = scratch / "otter"
    otter.mkdir()
    honest = {"solution": (filled, solution_notebook(name)),
              "blank": (released, nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4))}
    picked = pick_mutants(name, fail=2, passing=1)
    named = next(m for m in load_mutants(name) if m.named and m not in picked)    # named in its feedback
    for m in [*picked, named]:
        honest[f"{m.expect}-{m.name}".replace("_", "-")] = (nbgrader_mutant(filled, m), mutant_notebook(m))
    assert len(honest) == 6
    for label, (nb, otter_nb) in honest.items():
        submit(root, name, label, nb)
        nbformat.write(otter_nb, otter / f"{label}.ipynb")
    attack = type("Attack", (), {"replaces": "Attention", "code": forgery.CLOSE_AND_CONSTANTS.strip("\n"),
                                 "notebook": name, "name": "close_and_constants"})
    submit(root, name, "attack", nbgrader_mutant(filled, attack))
    # code that would rewrite a classmate's submission from nbgrader's kernel
    victim = root / "submitted" / "solution" / name / f"{name}.ipynb"
    code = f"import pathlib\npathlib.Path({str(victim)!r}).write_text('{{}}')"
    saboteur = type("Saboteur", (), {"replaces": "Attention", "notebook": name, "name": "saboteur",
                                     "code": code})
    submit(root, name, "saboteur", nbgrader_mutant(filled, saboteur))
    # code the rules flag (suspicious code) is held on nbgrader too
    flagged = type("Flagged", (), {"replaces": "Attention", "notebook": name, "name": "flagged",
                                   "code": forgery.HIDDEN_MAGIC.strip("\n")})
    submit(root, name, "flagged", nbgrader_mutant(filled, flagged))
    (otter / "attack.ipynb").write_bytes(forgery.attack_notebook(
        {"base": "solution", "replaces": "Attention", "cells": [forgery.CLOSE_AND_CONSTANTS]}))
    engine = subprocess.run([sys.executable, "-m", "course", "nbgrader", name, "--course-dir", str(root),
                             "--workers", "2"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=1800)
    export = scratch / "grades.csv"
    exported = nbgrader(root, "export", "--to", str(export), env=env)
    return {"root": root, "engine": engine, "exported": exported, "honest": list(honest), "victim": victim,
            "rows": read_export(export) if export.exists() else {}, "named": named,
            "course": grade_folder(name, otter, scratch / "course-grade", workers=2)}


def _exported(data: dict, student: str) -> dict:
    row = data["rows"][(ENGINE_NB, student)]
    return {q.name: float(row[q.name]) for q in _auto(ENGINE_NB)}


def test_the_one_command_runs_autograde_then_writes_the_gradebook(engine_class):
    r = engine_class["engine"]
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "gradebook: the automatic scores of 9 submission(s)" in r.stdout
    assert "Warning" not in r.stdout + r.stderr, re.findall(r".*Warning.*", r.stdout + r.stderr)[:5]
    assert "Autograding" in r.stderr or "autograde" in r.stderr.lower()      # nbgrader's own log came through
    assert engine_class["exported"].returncode == 0, engine_class["exported"].stderr[-3000:]


def test_a_named_mistake_is_the_automatic_comment_of_its_questions_answer(engine_class):
    """nbgrader's feedback shows it beside the answer; an answer with no named mistake gets none."""
    from nbgrader.api import Gradebook

    from autograder.mutants import load_mutants
    m = engine_class["named"]
    named = {f"fail-{x.name}".replace("_", "-"): x for x in load_mutants(ENGINE_NB) if x.named}
    with Gradebook(f"sqlite:///{engine_class['root'] / 'gradebook.db'}") as gb:
        said = {s: gb.find_comment(f"{m.question}-answer", ENGINE_NB, ENGINE_NB, s).auto_comment
                for s in engine_class["honest"]}
    assert said[f"fail-{m.name}".replace("_", "-")] == f"The mistake, named: {m.sentence}."
    for student, comment in said.items():
        if student in named:
            assert comment == f"The mistake, named: {named[student].sentence}.", student
        else:
            assert not comment or "The mistake, named" not in comment, student


def test_an_honest_class_raises_no_checksum_warning(engine_class):
    log = engine_class["engine"].stderr
    assert "Attribute 'checksum'" not in log, re.findall(r".*Attribute 'checksum'.*", log)[:5]
    assert "has changed!" not in log


def test_gradebook_scores_are_course_grades_per_question(engine_class):
    for student in engine_class["honest"] + ["attack"]:
        course = engine_class["course"][student]
        expected = {q.name: float(course[q.name] or 0) for q in _auto(ENGINE_NB)}
        assert _exported(engine_class, student) == expected, student
    assert _exported(engine_class, "solution") == {q.name: q.max_points for q in _auto(ENGINE_NB)}


def test_the_attack_scores_what_its_content_deserves_under_nbgrader(engine_class):
    """In the student's kernel the replaced `close` passes the tests; the judge zeroes the row."""
    assert engine_class["course"]["attack"]["grading_status"].startswith("tampering detected")
    assert sum(_exported(engine_class, "attack").values()) == 0.0
    full = load("03_attention").max_points
    assert f"attack: 0 / {full:g} automatic points" in engine_class["engine"].stdout


def test_a_row_the_rules_flagged_is_held_in_nbgraders_gradebook(engine_class):
    """A flagged row is held in nbgrader's gradebook as Canvas, Moodle and Gradescope hold it (its
    points are not exported): its cells are 0 and wait for manual grading, and the terminal says
    what is held."""
    from nbgrader.api import Gradebook
    out = engine_class["engine"].stdout
    held = [line for line in out.splitlines() if line.startswith("HELD flagged: ")]
    assert len(held) == 1 and "suspicious code" in held[0], out[-2000:]
    assert sum(_exported(engine_class, "flagged").values()) == 0.0
    with Gradebook(f"sqlite:///{engine_class['root'] / 'gradebook.db'}") as gb:
        submission = gb.find_submission(ENGINE_NB, "flagged")
        tests = [g for nb in submission.notebooks for g in nb.grades if "-test" in g.name]
        assert tests and all(g.auto_score == 0 and g.needs_manual_grade for g in tests)


def test_no_students_code_runs_in_nbgraders_kernel(engine_class):
    """nbgrader's autograde would run the student's code unsandboxed, as the instructor, in the
    course folder (a copier could read source/ into its own submission, a saboteur blank a
    classmate's, a daemon rewrite gradebook.db). The course's autograde runs none of it: the classmate's
    submission is as submitted and keeps full marks, and the test cells say where their scores come from."""
    assert nbformat.read(engine_class["victim"], as_version=4).cells       # not overwritten
    assert _exported(engine_class, "solution") == {q.name: q.max_points for q in _auto(ENGINE_NB)}
    folder = engine_class["root"] / "autograded" / "saboteur" / ENGINE_NB
    graded = nbformat.read(folder / f"{ENGINE_NB}.ipynb", as_version=4)
    tests = [c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade")
             and not c.metadata["nbgrader"].get("solution") and c.cell_type == "code"]
    assert tests and all(c.outputs and c.outputs[0].get("ename") == "NotRun" for c in tests)
    assert sum(_exported(engine_class, "saboteur").values()) < 13


def test_released_text_is_what_generate_assignment_leaves_and_otter_form_keeps_the_answers():
    """The two readings `course nbgrader` and autograde rely on, without running nbgrader."""
    from instructor.nbgrader.grade import is_test_cell, otter_form
    from instructor.nbgrader.plugins import released_text
    from instructor.nbgrader.source import source_notebook

    source, _ = source_notebook(ENGINE_NB)
    hidden = [c for c in source.cells if is_test_cell(c) and "BEGIN HIDDEN TESTS" in c.source]
    assert hidden
    for cell in hidden:
        text = released_text(cell.source)
        assert "BEGIN HIDDEN TESTS" not in text and "def test_" not in text
        assert text.splitlines()[0] == cell.source.splitlines()[0]        # the header line stays
    otter = otter_form(source)
    checks = [c.source for c in otter.cells if c.source.startswith("grader.check(")]
    assert checks == [f'grader.check("{q.name}")' for q in _auto(ENGINE_NB)]
    assert not any(is_test_cell(c) for c in otter.cells)
    kept = [c.source for c in source.cells if not is_test_cell(c)]
    assert [c.source for c in otter.cells if not c.source.startswith("grader.check(")] == kept


# ---------------------------------------------------------------- every solution through `course nbgrader`

@pytest.fixture(scope="module")
def solutions_class(tmp_path_factory) -> dict:
    """One nbgrader course with every notebook, each with one student who submitted the master's
    answers (the skipped cells holding the outputs of the student's own run): `nbgrader
    generate_assignment` and `nbgrader autograde` once for all (the course's autograde runs
    nothing; `engine_class` covers `course nbgrader` running it itself), then `course nbgrader NN
    --no-autograde --workers 1` for each notebook (its `main`, in this process: one interpreter's
    start and imports for them all) and `nbgrader export` once."""
    import io
    import time
    from contextlib import redirect_stdout

    from benchmarks.nbgrader_class import filled_notebook, read_export, submit
    from benchmarks.nbgrader_grading import with_outputs
    from instructor.nbgrader.commands import nbgrader, nbgrader_env
    from instructor.nbgrader.export import build_nbgrader
    from instructor.nbgrader.grade import main as course_nbgrader
    from instructor.nbgrader.source import source_notebook

    names = masters()
    root = tmp_path_factory.mktemp("nbgrader-solutions") / "course"
    build_nbgrader(names, out=root)
    env = nbgrader_env(root)
    generated = nbgrader(root, "generate_assignment", "*", env=env)
    assert generated.returncode == 0, generated.stderr[-3000:]
    for name in names:
        released = nbformat.read(root / "release" / name / f"{name}.ipynb", as_version=4)
        submit(root, name, "solution", with_outputs(filled_notebook(released, source_notebook(name)[1])))
    autograded = nbgrader(root, "autograde", "*", env=env)
    assert autograded.returncode == 0, autograded.stderr[-3000:]
    engine, seconds = {}, {}
    with pytest.MonkeyPatch.context() as mp:
        for key in ("COURSE_DATA_CACHE", "COURSE_STORIES_FILE", "OMP_NUM_THREADS"):
            if key in env:
                mp.setenv(key, env[key])
        for name in names:
            started = time.monotonic()
            out = io.StringIO()
            with redirect_stdout(out):
                code = course_nbgrader([name, "--course-dir", str(root), "--no-autograde", "--workers", "1"])
            engine[name] = (code, out.getvalue())
            seconds[name] = round(time.monotonic() - started, 1)
    exported = nbgrader(root, "export", "--to", str(root / "grades.csv"), env=env)
    assert exported.returncode == 0, exported.stderr[-3000:]
    return {"root": root, "names": names, "engine": engine, "seconds": seconds,
            "rows": read_export(root / "grades.csv")}


def test_every_solution_gets_full_marks_through_course_nbgrader(solutions_class):
    """The master's answers keep every automatic point on the nbgrader route, as under `course grade`
    and in the Gradescope zip (09 lost q5 when the engine read its training cells, which the other
    routes skip)."""
    import json

    from instructor.nbgrader.grade import otter_form

    data = solutions_class
    assert data["names"] == masters()                 # every notebook of the course
    for name in data["names"]:
        code, stdout = data["engine"][name]
        assert code == 0, f"{name}:\n{stdout[-3000:]}"
        asg = load(name)
        assert f"solution: {asg.max_points:g} / {asg.max_points:g} automatic points" in stdout, \
            f"{name}:\n{stdout[-2000:]}"
        row = data["rows"][(name, "solution")]
        got = {q.name: float(row[q.name]) for q in asg.auto}
        assert got == {q.name: q.max_points for q in asg.auto}, name
        graded = data["root"] / "course-grade" / name
        with open(graded / "grades.csv", newline="") as f:
            (result,) = csv.DictReader(f)
        assert result["grading_status"] == "ok", (name, result["grading_status"])
        # the cells nbgrader's autograde skips (training runs) were not run by the engine either
        submitted = nbformat.read(data["root"] / "submitted" / "solution" / name / f"{name}.ipynb",
                                  as_version=4)
        skipped = {i + 1 for i, c in enumerate(otter_form(submitted).cells)
                   if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("-skipped")}
        errors = json.loads((graded / "results" / "solution.json").read_text())["cell_errors"]
        assert not [e for e in errors if e["cell"] in skipped], (name, errors)
    print("course nbgrader seconds per notebook:", data["seconds"])
