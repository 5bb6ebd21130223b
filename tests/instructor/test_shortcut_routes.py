"""The same answers graded on the three routes, `course grade`, the Gradescope zip (its own
run_autograder, part of it under Docker's default seccomp profile, where the sandbox falls back to
`user` mode) and `course nbgrader`, come out the same, question by question.

The class is 06_block's solution and blank notebook and a sample of its shortcut answers
(autograder/shortcuts.py; `course grade` grades them all: tests/autograder/test_shortcuts.py):
issue 26's three-line `class Block(DenoiserBlock)` with the GIVEN MultiHead (9/9 under `course grade`
and `course nbgrader` before, whose sandbox showed the instructor's whole course/; 0 through the zip,
which ships the week's files), DenoiserBlock's forward copied onto a Block of the notebook's own,
`F.layer_norm` for the layer norm 06 q1 asks for by hand (2/2 on every route before) and the
notebook's own `nn.LayerNorm`. Each keeps nothing of its question, on every route; the solution and
the blank grade as they do alone. Slow (minutes): marked `slow`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import exercise_rules, gradescope, mutants, shortcuts
from autograder.assignment import load
from instructor import build

NAME = "06_block"
SAMPLE = ("denoiser_block", "DenoiserBlock_copy", "layer_norm", "notebook_norm")
NO_NAMESPACES = [sys.executable, str(Path(__file__).resolve().parents[1] / "support" / "no_namespaces.py")]
pytestmark = pytest.mark.e2e


def _auto() -> list[str]:
    return [q.name for q in load(NAME).auto]


@pytest.fixture(scope="module")
def routes(tmp_path_factory) -> dict:
    """{route: {submission: {question: points}}} for the class on the three routes."""
    from autograder.degenerate import degenerate_notebook
    from benchmarks.nbgrader_class import filled_notebook, read_export, submit
    from benchmarks.nbgrader_class import mutant_notebook as nbgrader_answer
    from instructor.nbgrader.commands import nbgrader, nbgrader_env
    from instructor.nbgrader.export import build_nbgrader
    from instructor.nbgrader.source import source_notebook

    tmp = tmp_path_factory.mktemp("routes")
    answers = {d.name: d for d in shortcuts.shortcuts(NAME) if d.name in SAMPLE}
    assert set(answers) == set(SAMPLE)
    otter = tmp / "otter"
    otter.mkdir()
    nbformat.write(mutants.solution_notebook(NAME), otter / "solution.ipynb")
    nbformat.write(nbformat.read(build.NOTEBOOKS / f"{NAME}.ipynb", as_version=4), otter / "blank.ipynb")
    for label, d in answers.items():
        nbformat.write(degenerate_notebook(d), otter / f"{label}.ipynb")
    found: dict[str, dict] = {}
    rows = mutants.grade_folder(NAME, otter, tmp / "course-grade")
    found["course grade"] = {s: {q: float(r[q] or 0) for q in _auto()} for s, r in rows.items()}

    zip_path = build.BUILD / f"{NAME}-autograder.zip"
    import zipfile
    if not zip_path.exists() or f"engine/autograder/assignments/{NAME}/{exercise_rules.RULES_FILE}" \
            not in zipfile.ZipFile(zip_path).namelist():
        build.assign(NAME)                            # missing, or made by an older build
    found["gradescope"] = {}
    for path in sorted(otter.glob("*.ipynb")):
        prefix = [] if path.stem in ("solution", "denoiser_block") else NO_NAMESPACES
        out = gradescope.grade(zip_path, path, tmp / "gs" / path.stem, name=f"{NAME}.ipynb", prefix=prefix)
        found["gradescope"][path.stem] = gradescope.question_points(out)

    root = tmp / "nbgrader"
    build_nbgrader([NAME], out=root)
    env = nbgrader_env(root)
    generated = nbgrader(root, "generate_assignment", NAME, env=env)
    assert generated.returncode == 0, generated.stderr[-3000:]
    released = nbformat.read(root / "release" / NAME / f"{NAME}.ipynb", as_version=4)
    filled = filled_notebook(released, source_notebook(NAME)[1])
    submit(root, NAME, "solution", filled)
    submit(root, NAME, "blank", released)
    for label, d in answers.items():
        submit(root, NAME, label.replace("_", "-"), nbgrader_answer(filled, d))
    done = subprocess.run([sys.executable, "-m", "course", "nbgrader", NAME, "--course-dir", str(root),
                           "--workers", "2"], cwd=build.ROOT, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    exported = nbgrader(root, "export", "--to", str(tmp / "grades.csv"), env=env)
    assert exported.returncode == 0, exported.stderr[-3000:]
    export = read_export(tmp / "grades.csv")
    found["nbgrader"] = {s: {q: float(export[(NAME, s.replace("_", "-"))][q]) for q in _auto()}
                         for s in found["course grade"]}
    return found


def test_every_route_grades_the_class_the_same(routes):
    assert routes["gradescope"] == routes["course grade"]
    assert routes["nbgrader"] == routes["course grade"]


def test_the_shortcuts_keep_nothing_of_their_question_and_the_rest_as_earned(routes):
    full = {q.name: q.max_points for q in load(NAME).auto}
    by_question = {d.name: d.question for d in shortcuts.shortcuts(NAME) if d.name in SAMPLE}
    for route, rows in routes.items():
        assert rows["solution"] == full, route
        assert sum(rows["blank"].values()) == 0, route
        for label, q in by_question.items():
            assert rows[label][q] == 0, (route, label)
            assert {k: v for k, v in rows[label].items() if k != q} == \
                {k: v for k, v in full.items() if k != q}, (route, label)
