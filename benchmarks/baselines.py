"""Stock graders on the same submissions, for the grading benchmarks: Otter and nbgrader as their users
run them, each run checked against ``course grade``'s points.

- :func:`otter_zip`: Otter's own autograder zip of an assignment, made by ``otter assign`` from its
  master (or the copy ``course build`` keeps of it, ``autograder/build/NN_name-otter.zip``), whose
  test files must be the course's own (``autograder/assignments/NN_name/tests``).
- :func:`otter_run`: ``otter run`` one notebook after the other (no containers: each run starts a
  Jupyter kernel that runs the notebook and Otter's grading).
- :func:`otter_grade`: ``otter grade``, where a Docker engine answers (:func:`docker_engine`); each of
  its containers runs the zip's ``run_autograder``, which calls ``otter.run.run_autograder`` as
  ``otter run`` does, so without Docker ``otter run`` is its per-notebook cost.
- :func:`nbgrader_autograde`: the same answers as nbgrader submissions of the course's nbgrader course
  (``instructor.nbgrader``), ``nbgrader autograde`` once for all of them, the tests in the student's
  kernel as nbgrader runs them (``COURSE_NBGRADER_KERNEL=1``), the points from ``nbgrader export``.

Every run is a :class:`Run`: its points per automatically graded question, or why it has none.
:func:`problems` lists the runs that failed or scored other than ``course grade``; a benchmark prints
no ratio over a baseline with any.
"""
from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
BUILD = REPO / "autograder" / "build"
ASSIGNMENTS = REPO / "autograder" / "assignments"
OTTER_RUN_TIMEOUT = 900


class BaselineError(RuntimeError):
    """A baseline that cannot be run at all (its zip, its course)."""


@dataclass
class Run:
    """One submission graded by one grader: its points per question (None: the run failed, ``error``
    says why) and the seconds it took (0 when the grader ran the class in one command)."""

    stem: str
    points: dict[str, float] | None
    seconds: float = 0.0
    error: str = ""


@dataclass
class Member:
    """One submission of a synthetic class: ``kind`` is solution, blank or buggy (the solution with
    the answer that defines ``reset`` put back as released)."""

    stem: str
    kind: str
    reset: str | None = None


@dataclass
class Baseline:
    """A stock grader's runs over the class and its wall time for all of them."""

    name: str
    runs: list[Run] = field(default_factory=list)
    seconds: float = 0.0
    load: list = field(default_factory=list)      # the load averages before and after


# ---------------------------------------------------------------- Otter

def _zip_tests(zip_path: Path) -> dict[str, str]:
    with zipfile.ZipFile(zip_path) as z:
        return {Path(n).name: _program(z.read(n)) for n in z.namelist()
                if n.startswith("tests/") and n.endswith(".py")}


def _program(source: bytes) -> str:
    """A test file as the program it is (its syntax tree): ``course build`` lays the tests out as our
    style wants them, ``otter assign`` as Otter writes them; the same program scores the same."""
    try:
        return ast.dump(ast.parse(source))
    except SyntaxError:
        return source.decode(errors="replace")


def otter_zip(name: str, tmp: Path, tests: Path | None = None) -> Path:
    """Otter's autograder zip for ``name``: the one ``course build`` kept when there is one, else made
    here by ``otter assign`` on a copy of the master. Its test files must be ``tests`` (default: the
    assignment's own), the same programs (laid out as each tool writes them); BaselineError otherwise."""
    tests = tests or ASSIGNMENTS / name / "tests"
    want = {p.name: _program(p.read_bytes()) for p in sorted(tests.glob("*.py"))}
    kept = BUILD / f"{name}-otter.zip"
    if kept.exists() and _zip_tests(kept) == want:
        return kept
    master = REPO / "solutions" / f"{name}.ipynb"
    if not master.exists():
        raise BaselineError(f"no master notebook {master} to run otter assign on")
    work = tmp / f"otter-assign-{name}"
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(master, work / master.name)
    done = subprocess.run([PY, "-m", "otter", "assign", "--no-run-tests", master.name, "dist"], cwd=work,
                          capture_output=True, text=True)
    zips = sorted((work / "dist" / "autograder").glob("*.zip"))
    if done.returncode != 0 or not zips:
        raise BaselineError(f"otter assign failed on {name}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    if _zip_tests(zips[0]) != want:
        raise BaselineError(f"otter assign's tests for {name} are not {tests} (run `course build`)")
    return zips[0]


def otter_points(results: dict, auto: list[str]) -> dict[str, float]:
    """Points per question from Otter's results.json (Gradescope's format); KeyError if one is missing."""
    by_name = {t.get("name"): t for t in results.get("tests", []) if isinstance(t, dict)}
    return {q: float(by_name[q]["score"]) for q in auto}


def otter_run(zip_path: Path, notebooks: list[Path], out: Path, auto: list[str]) -> Baseline:
    """``otter run`` on each notebook, one after the other, each in its own output folder."""
    otter = str(Path(PY).parent / "otter")
    base = Baseline("otter run")
    started = time.monotonic()
    for nb in notebooks:
        folder = out / nb.stem
        folder.mkdir(parents=True)
        t0 = time.monotonic()
        try:
            done = subprocess.run([otter, "run", "-a", str(zip_path), "-o", str(folder), str(nb)],
                                  capture_output=True, text=True, cwd=folder, timeout=OTTER_RUN_TIMEOUT)
            error = "" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
        except subprocess.TimeoutExpired:
            error = f"ran over {OTTER_RUN_TIMEOUT} s"
        points = None
        if not error:
            try:
                points = otter_points(json.loads((folder / "results.json").read_text()), auto)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                error = f"no points in results.json ({type(exc).__name__}: {exc})"
        base.runs.append(Run(nb.stem, points, time.monotonic() - t0, error))
    base.seconds = time.monotonic() - started
    return base


def docker_engine() -> bool:
    """Whether a Docker engine answers here (``otter grade`` needs one)."""
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def otter_grade(zip_path: Path, notebooks: list[Path], out: Path, auto: list[str]) -> Baseline:
    """``otter grade`` on the notebooks (one container at a time), its points from final_grades.csv.
    Needs a Docker engine (:func:`docker_engine`)."""
    import csv

    folder = out / "class"
    folder.mkdir(parents=True)
    for nb in notebooks:
        shutil.copy(nb, folder / nb.name)
    base = Baseline("otter grade")
    started = time.monotonic()
    done = subprocess.run([str(Path(PY).parent / "otter"), "grade", "-a", str(zip_path), "-o", str(out),
                           "--containers", "1", str(folder)], capture_output=True, text=True)
    base.seconds = time.monotonic() - started
    rows = {}
    if (out / "final_grades.csv").exists():
        with open(out / "final_grades.csv", newline="") as f:
            rows = {Path(r.get("file", "")).stem: r for r in csv.DictReader(f)}
    for nb in notebooks:
        row = rows.get(nb.stem)
        try:
            base.runs.append(Run(nb.stem, {q: float(row[q]) for q in auto}) if row else
                             Run(nb.stem, None, error=f"no row (exit {done.returncode}: "
                                                       f"{done.stderr.strip()[-300:]})"))
        except (KeyError, ValueError) as exc:
            base.runs.append(Run(nb.stem, None, error=f"bad row: {exc}"))
    return base


# ---------------------------------------------------------------- nbgrader

def nbgrader_class(name: str, members: list[Member], root: Path) -> None:
    """The course's nbgrader course for ``name`` in ``root``, the assignment generated and every member
    submitted: the master's answers in the released notebook, the blank as released, a buggy one with
    the cell that defines its ``reset`` name last left as released."""
    import copy

    import nbformat

    from autograder.mutants import defines
    from benchmarks.nbgrader_class import filled_notebook, submit
    from instructor.nbgrader.commands import nbgrader, nbgrader_env
    from instructor.nbgrader.export import build_nbgrader
    from instructor.nbgrader.source import source_notebook

    build_nbgrader([name], out=root)
    env = nbgrader_env(root, {"COURSE_NBGRADER_KERNEL": "1"})
    done = nbgrader(root, "generate_assignment", name, env=env)
    released_path = root / "release" / name / f"{name}.ipynb"
    if done.returncode != 0 or not released_path.exists():
        raise BaselineError(f"nbgrader generate_assignment {name} failed:\n{done.stderr[-2000:]}")
    released = nbformat.read(released_path, as_version=4)
    filled = filled_notebook(released, source_notebook(name)[1])
    last = {n: i for i, c in enumerate(released.cells) if c.cell_type == "code" for n in defines(c.source)}
    for m in members:
        if m.kind == "solution":
            nb = filled
        elif m.kind == "blank":
            nb = released
        else:
            if m.reset not in last:
                raise BaselineError(f"{name}: nbgrader's released notebook defines no {m.reset}")
            nb = copy.deepcopy(filled)
            nb.cells[last[m.reset]] = copy.deepcopy(released.cells[last[m.reset]])
        submit(root, name, m.stem, nb)


def nbgrader_autograde(name: str, members: list[Member], root: Path, auto: list[str]) -> Baseline:
    """``nbgrader autograde`` once for the class in ``root`` (:func:`nbgrader_class`), then ``nbgrader
    export``: each member's points per question."""
    from benchmarks.nbgrader_class import read_export
    from instructor.nbgrader.commands import nbgrader, nbgrader_env

    env = nbgrader_env(root, {"COURSE_NBGRADER_KERNEL": "1"})
    base = Baseline("nbgrader autograde")
    started = time.monotonic()
    done = nbgrader(root, "autograde", name, env=env)
    base.seconds = time.monotonic() - started
    export = root.parent / f"{root.name}-export.csv"
    exported = nbgrader(root, "export", "--to", str(export), env=env)
    rows = read_export(export) if export.exists() else {}
    for m in members:
        row = rows.get((name, m.stem))
        graded = root / "autograded" / m.stem / name / f"{name}.ipynb"
        if row is None or not graded.exists():
            why = done.stderr if done.returncode else exported.stderr
            base.runs.append(Run(m.stem, None, error=f"not autograded ({why.strip()[-300:]})"))
            continue
        try:
            base.runs.append(Run(m.stem, {q: float(row[q] or 0) for q in auto}))
        except (KeyError, ValueError) as exc:
            base.runs.append(Run(m.stem, None, error=f"bad export row: {exc}"))
    return base


# ---------------------------------------------------------------- checking

def course_points(out: Path, auto: list[str]) -> dict[str, dict[str, float]]:
    """``course grade``'s points per submission (by stem) and question, from its results folder."""
    found = {}
    for path in sorted((out / "results").glob("*.json")):
        row = json.loads(path.read_text())
        points = {q["question"]: q["points"] for q in row["questions"]}
        found[path.stem] = {q: float(points.get(q) or 0.0) for q in auto}
    return found


def problems(base: Baseline, expected: dict[str, dict[str, float]]) -> list[str]:
    """One line per run of ``base`` that failed or scored other than ``expected`` on a question."""
    bad = []
    for run in base.runs:
        if run.points is None:
            bad.append(f"{base.name} {run.stem}: failed: {run.error}")
            continue
        want = expected.get(run.stem)
        if want is None:
            bad.append(f"{base.name} {run.stem}: course grade has no row for it")
            continue
        differ = {q: (run.points[q], want[q]) for q in want if abs(run.points[q] - want[q]) > 1e-9}
        if differ:
            shown = ", ".join(f"{q} {a:g} (course grade {b:g})" for q, (a, b) in differ.items())
            bad.append(f"{base.name} {run.stem}: {shown}")
    return bad

