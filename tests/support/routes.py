"""One class of answers graded on the three routes: `course grade`, the Gradescope zip (its own
run_autograder, one submission at a time, as Gradescope runs it) and `course nbgrader` (a real
nbgrader course: generate_assignment, the submissions, `course nbgrader`, `nbgrader export`).

An answer is given by what it does to the solution: a function from a solution notebook (Otter's
form, or nbgrader's released form filled with the master's answers) to the answer's notebook in the
same form. Each route's points come back as {route: {label: {question: points}}}.
"""
from __future__ import annotations

import copy
import subprocess
import sys
import zipfile
from collections.abc import Callable, Collection
from pathlib import Path

import nbformat

from autograder import exercise_rules, gradescope, mutants
from autograder.alternatives import without_prompt
from autograder.assignment import load
from autograder.degenerate import binds
from instructor import build

Make = Callable[[nbformat.NotebookNode], nbformat.NotebookNode]
ROUTES = ("course grade", "gradescope", "nbgrader")
NO_NAMESPACES = [sys.executable, str(Path(__file__).resolve().parent / "no_namespaces.py")]


def swap(replaces: tuple[str, ...], code: str) -> Make:
    """An answer made from a solution notebook of either form: the last answer cell that binds
    ``replaces[0]`` becomes ``code``, the last one of each other name says it is written above."""
    def make(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
        nb = copy.deepcopy(nb)

        def last(name: str) -> nbformat.NotebookNode:
            cells = [c for c in nb.cells if c.cell_type == "code" and name in binds(without_prompt(c.source))
                     and not c.metadata.get("nbgrader", {}).get("grade")
                     and "otter_ignore" not in c.metadata.get("tags", [])]
            assert cells, f"no answer cell binds {name}"
            return cells[-1]
        cells = [last(n) for n in replaces]
        for cell in cells[1:]:
            if cell is not cells[0]:
                cell.source = "# (written in the cell above)\n"
        cells[0].source = code
        return nb
    return make


def auto_questions(name: str) -> list[str]:
    return [q.name for q in load(name).auto]


def autograder_zip(name: str) -> Path:
    """The notebook's Gradescope zip, built again where it is missing or older than its rules."""
    path = build.BUILD / f"{name}-autograder.zip"
    if not path.exists() or f"engine/autograder/assignments/{name}/{exercise_rules.RULES_FILE}" \
            not in zipfile.ZipFile(path).namelist():
        build.assign(name)
    return path


def grade_on_routes(name: str, answers: dict[str, Make], tmp: Path, gradescope_labels: Collection[str] = (),
                    seccomp: Collection[str] = (), routes: Collection[str] = ROUTES
                    ) -> dict[str, dict[str, dict[str, float]]]:
    """The points of the solution, the blank notebook and each of ``answers`` on `course grade` and
    `course nbgrader`, and of the solution, the blank and ``gradescope_labels`` through the Gradescope zip
    (those of ``seccomp`` under a seccomp filter that refuses namespaces, as Docker's default); on
    the ``routes`` asked for (a route left out costs nothing)."""
    questions = auto_questions(name)
    otter = tmp / "otter"
    otter.mkdir(parents=True)
    solution = mutants.solution_notebook(name)
    nbformat.write(solution, otter / "solution.ipynb")
    nbformat.write(nbformat.read(build.NOTEBOOKS / f"{name}.ipynb", as_version=4), otter / "blank.ipynb")
    for label, make in answers.items():
        nbformat.write(make(mutants.solution_notebook(name)), otter / f"{label}.ipynb")
    found: dict[str, dict[str, dict[str, float]]] = {}
    if "course grade" in routes:
        rows = mutants.grade_folder(name, otter, tmp / "course-grade")
        found["course grade"] = {s: {q: float(r[q] or 0) for q in questions} for s, r in rows.items()}
    if "gradescope" in routes:
        found["gradescope"] = {}
        zip_path = autograder_zip(name)
        for label in ("solution", "blank", *gradescope_labels):
            out = gradescope.grade(zip_path, otter / f"{label}.ipynb", tmp / "gs" / label,
                                   name=f"{name}.ipynb", prefix=NO_NAMESPACES if label in seccomp else [])
            found["gradescope"][label] = gradescope.question_points(out)
    if "nbgrader" in routes:
        found["nbgrader"] = _nbgrader(name, answers, tmp, questions)
    return found


def _nbgrader(name: str, answers: dict[str, Make], tmp: Path, questions: list[str]
              ) -> dict[str, dict[str, float]]:
    """A real nbgrader course of one assignment: the solution, the blank and ``answers`` submitted,
    `course nbgrader` run, and the points `nbgrader export` reports."""
    from benchmarks.nbgrader_class import filled_notebook, read_export, submit
    from instructor.nbgrader.commands import nbgrader, nbgrader_env
    from instructor.nbgrader.export import build_nbgrader
    from instructor.nbgrader.source import source_notebook

    root = tmp / "nbgrader"
    build_nbgrader([name], out=root)
    env = nbgrader_env(root)
    generated = nbgrader(root, "generate_assignment", name, env=env)
    assert generated.returncode == 0, generated.stderr[-3000:]
    released = nbformat.read(root / "release" / name / f"{name}.ipynb", as_version=4)
    filled = filled_notebook(released, source_notebook(name)[1])
    students = {"solution": filled, "blank": released}
    students.update({label: make(filled) for label, make in answers.items()})
    for label, nb in students.items():
        submit(root, name, label.replace("_", "-"), nb)
    done = subprocess.run([sys.executable, "-m", "course", "nbgrader", name, "--course-dir", str(root),
                           "--workers", "2"], cwd=build.ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    exported = nbgrader(root, "export", "--to", str(tmp / "grades.csv"), env=env)
    assert exported.returncode == 0, exported.stderr[-3000:]
    export = read_export(tmp / "grades.csv")
    return {s: {q: float(export[(name, s.replace("_", "-"))][q]) for q in questions} for s in students}
