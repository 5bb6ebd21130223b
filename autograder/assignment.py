"""An assignment's grading material: ``assignment.json`` and the Otter test files in ``tests/``.

Layout (written by ``course build``)::

    autograder/assignments/NN_name/assignment.json
        {"name": ..., "questions": [{"name": "q1", "points": 2, "manual": false}, ...]}
    autograder/assignments/NN_name/tests/q1.py
        Otter exception-based test file (public and hidden cases)
    autograder/assignments/NN_name/rules.toml
        what each exercise may not use (hand-written; :mod:`autograder.exercise_rules`)
    autograder/assignments/NN_name/mutants/*.py
        known wrong and right answers; those with a ``says:`` line are named mistakes
        (hand-written; :mod:`autograder.mistakes`)

The test files are read here, in the grader (they are trusted instructor material), the way Otter's
``ExceptionTestFile`` reads them, point rules included, without importing Otter (slow to import).
The runner receives their source only after the student's cells have run.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from . import exercise_rules, mistakes

PACKAGE_DIR = Path(__file__).resolve().parent
# each notebook's grading material: tests, mutants and degenerate answers, one folder a notebook
ASSIGNMENTS = PACKAGE_DIR / "assignments"
IMPORT_LINE = re.compile(r"^from otter\.test_files import test_case\s*$", re.MULTILINE)


class AssignmentError(ValueError):
    """The assignment's material is missing or malformed."""


@dataclass
class Case:
    """One test case of a question."""

    question: str
    index: int
    name: str
    points: float
    hidden: bool
    failure_message: str | None
    success_message: str | None


@dataclass
class Question:
    """A question of the assignment; ``manual`` questions have no tests."""

    name: str
    points: float
    manual: bool
    cases: list[Case] = field(default_factory=list)
    source: str = ""
    all_or_nothing: bool = False
    rules: dict[str, Any] = field(default_factory=dict)    # what its definitions may not use

    @property
    def max_points(self) -> float:
        return float(sum(c.points for c in self.cases))


@dataclass
class Assignment:
    """An assignment: its name, its folder and its questions in order."""

    name: str
    folder: Path
    questions: list[Question]
    checks: list[str] = field(default_factory=list)
    given_code: list[str] = field(default_factory=list)
    # per question: its named mistakes and the right answers of their pieces (autograder.mistakes)
    known_mistakes: dict[str, list[mistakes.Mutant]] = field(default_factory=dict)

    @property
    def auto(self) -> list[Question]:
        return [q for q in self.questions if not q.manual]

    @property
    def max_points(self) -> float:
        return float(sum(q.max_points for q in self.auto))

    def tests_payload(self) -> list[dict]:
        """What the judge receives: each test file's source, without Otter's import line, and the
        question's own rules when it has some."""
        return [{"question": q.name, "source": IMPORT_LINE.sub("", q.source), "cases": len(q.cases),
                 **({"rules": q.rules} if q.rules else {}),
                 **(mistakes.payload(self.known_mistakes[q.name]) if q.name in self.known_mistakes else {})}
                for q in self.auto]


class _CaseOptions(TypedDict):
    """What a test file's ``@test_case(...)`` says about one case."""
    name: str | None
    points: float | None
    hidden: bool
    success_message: str | None
    failure_message: str | None


class _TestCase:
    """Stands in for ``otter.test_files.test_case`` while a test file is read."""

    def __init__(self, name: str | None = None, points: float | None = None, hidden: bool = False,
                 success_message: str | None = None, failure_message: str | None = None) -> None:
        self.kw: _CaseOptions = {"name": name, "points": points, "hidden": hidden,
                                 "success_message": success_message, "failure_message": failure_message}
        self.func: Any = None

    def __call__(self, func: Any) -> _TestCase:
        self.func = func
        return self


def resolve_points(total: Any, points: list[float | None]) -> list[float]:
    """Otter's rule for the points of each case, given the file's ``points`` (None, a number or a list)."""
    if isinstance(total, list):
        if len(total) != len(points):
            raise AssignmentError("points list and test cases differ in length")
        points, total = list(total), None
    given = sum(p for p in points if p is not None)
    unset = sum(p is None for p in points)
    if total is not None:
        if given > total:
            raise AssignmentError("more points in the test cases than in the test file")
        rest = (total - given) / unset if unset else 0.0
    elif given == 0 and all(p in (0, None) for p in points):
        rest = 1 / unset if unset else 0.0
    else:
        rest = 0.0
    return [float(p) if p is not None else float(rest) for p in points]


def read_test_file(question: str, source: str, path: Path | str = "<test>") -> tuple[list[Case], bool]:
    """The cases of one Otter exception-based test file, in file order, and its all_or_nothing flag."""
    env: dict[str, Any] = {"test_case": _TestCase, "__name__": f"test_{question}"}
    try:
        exec(compile(IMPORT_LINE.sub("", source), str(path), "exec"), env)
    except Exception as exc:
        raise AssignmentError(f"{path}: the test file does not load: {exc}") from exc
    found = [v for v in env.values() if isinstance(v, _TestCase)]
    points = resolve_points(env.get("points"), [tc.kw["points"] for tc in found])
    cases = []
    for i, (tc, pts) in enumerate(zip(found, points, strict=True)):
        name = getattr(tc.func, "__name__", None) or tc.kw["name"] or f"{question} - {i + 1}"
        cases.append(Case(question=question, index=i, name=name, points=pts, hidden=bool(tc.kw["hidden"]),
                          failure_message=tc.kw["failure_message"], success_message=tc.kw["success_message"]))
    return cases, bool(env.get("all_or_nothing", False))


def names(base: Path = ASSIGNMENTS) -> list[str]:
    """The assignments the build has written (each NN_name/ with its assignment.json), in course
    order: what the grader can grade here. Which notebooks the course has is course.toml's list
    (instructor/registry.py), which the build follows."""
    return sorted(p.name for p in base.iterdir() if (p / "assignment.json").is_file())


def resolve(name_or_path: str, base: Path = ASSIGNMENTS) -> Path:
    """``NN_name`` -> ``autograder/assignments/NN_name``; a folder holding ``assignment.json`` is taken
    as it is."""
    p = Path(name_or_path)
    if (p / "assignment.json").is_file():
        return p.resolve()
    q = base / name_or_path
    if (q / "assignment.json").is_file():
        return q.resolve()
    raise AssignmentError(f"no assignment {name_or_path!r}: expected {q}/assignment.json "
                          "(run `course build` first)")


def load(name_or_path: str) -> Assignment:
    """Read an assignment's questions and test files."""
    folder = resolve(name_or_path)
    try:
        spec = json.loads((folder / "assignment.json").read_text(encoding="utf-8"))
    except ValueError as exc:
        raise AssignmentError(f"{folder}/assignment.json: {exc}") from exc
    try:
        rules = exercise_rules.load(folder)
    except exercise_rules.RulesError as exc:
        raise AssignmentError(str(exc)) from exc
    questions = []
    for qspec in spec.get("questions", []):
        q = Question(name=str(qspec["name"]), points=float(qspec.get("points", 0)),
                     manual=bool(qspec.get("manual", False)))
        if not q.manual:
            path = folder / "tests" / f"{q.name}.py"
            if not path.is_file():
                raise AssignmentError(f"missing test file {path}")
            q.source = path.read_text(encoding="utf-8")
            q.cases, q.all_or_nothing = read_test_file(q.name, q.source, path)
            q.rules = rules.pop(q.name, {})
        questions.append(q)
    if not questions:
        raise AssignmentError(f"{folder}/assignment.json lists no questions")
    if rules:
        raise AssignmentError(f"{folder}/{exercise_rules.RULES_FILE}: rules for {sorted(rules)}, which "
                              "are not auto-graded questions of the assignment")
    name = str(spec.get("name", folder.name))
    try:
        known = mistakes.catalogue(folder)
    except ValueError as exc:
        raise AssignmentError(str(exc)) from exc
    return Assignment(name=name, folder=folder, questions=questions, checks=template_checks(name, folder),
                      given_code=template_code(name, folder) or [],
                      known_mistakes={q.name: known[q.name] for q in questions
                                      if q.name in known and not q.manual})


CHECK_RE = re.compile(r"""\.check\(\s*["']([A-Za-z_][\w\-]*)["']""")


def template_code(name: str, folder: Path) -> list[str] | None:
    """The code cells of the blank student notebook (``NN_name.ipynb`` beside ``assignment.json``, or
    ``notebooks/NN_name.ipynb``), or None when there is none."""
    for path in (folder / f"{name}.ipynb", PACKAGE_DIR.parent / "notebooks" / f"{name}.ipynb"):
        if path.is_file():
            try:
                nb = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                return None
            return ["".join(c.get("source", "")) if isinstance(c.get("source"), list) else c.get("source", "")
                    for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    return None


def template_checks(name: str, folder: Path) -> list[str]:
    """The questions whose ``grader.check("qN")`` cell the student notebook has (to spot deleted cells);
    empty when there is no blank student notebook, and then deleted cells are not looked for."""
    found: list[str] = []
    for src in template_code(name, folder) or []:
        for q in CHECK_RE.findall(src):
            if q not in found:
                found.append(q)
    return found
