"""An assignment's grading material: ``assignment.json`` and the Otter test files in ``tests/``.

Layout (written by ``course build``)::

    autograder/NN_name/assignment.json
        {"name": ..., "questions": [{"name": "q1", "points": 2, "manual": false}, ...]}
    autograder/NN_name/tests/q1.py
        Otter exception-based test file (public and hidden cases)

The test files are read here, in the grader, with Otter's own loader (they are trusted instructor
material). The runner receives their source only after the student's cells have run.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from otter.test_files.exception_test import ExceptionTestFile

PACKAGE_DIR = Path(__file__).resolve().parent
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

    @property
    def auto(self) -> list[Question]:
        return [q for q in self.questions if not q.manual]

    @property
    def max_points(self) -> float:
        return float(sum(q.max_points for q in self.auto))

    def tests_payload(self) -> list[dict]:
        """What the runner receives: each test file's source, without Otter's import line."""
        return [{"question": q.name, "source": IMPORT_LINE.sub("", q.source), "cases": len(q.cases)}
                for q in self.auto]


def resolve(name_or_path: str, base: Path = PACKAGE_DIR) -> Path:
    """``NN_name`` -> ``autograder/NN_name``; a folder holding ``assignment.json`` is taken as it is."""
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
    questions = []
    for qspec in spec.get("questions", []):
        q = Question(name=str(qspec["name"]), points=float(qspec.get("points", 0)),
                     manual=bool(qspec.get("manual", False)))
        if not q.manual:
            path = folder / "tests" / f"{q.name}.py"
            if not path.is_file():
                raise AssignmentError(f"missing test file {path}")
            q.source = path.read_text(encoding="utf-8")
            tf = ExceptionTestFile.from_file(str(path))
            q.all_or_nothing = bool(tf.all_or_nothing)
            for i, tc in enumerate(tf.test_cases):
                func = getattr(tc.body, "test_func", None)
                name = getattr(func, "__name__", None) or str(tc.name)
                q.cases.append(Case(question=q.name, index=i, name=name, points=float(tc.points or 0),
                                    hidden=bool(tc.hidden), failure_message=tc.failure_message,
                                    success_message=tc.success_message))
        questions.append(q)
    if not questions:
        raise AssignmentError(f"{folder}/assignment.json lists no questions")
    name = str(spec.get("name", folder.name))
    return Assignment(name=name, folder=folder, questions=questions, checks=template_checks(name, folder))


CHECK_RE = re.compile(r"""\.check\(\s*["']([A-Za-z_][\w\-]*)["']""")


def template_checks(name: str, folder: Path) -> list[str]:
    """The questions whose ``grader.check("qN")`` cell the student notebook has (to spot deleted cells).

    Read from the blank student notebook (``notebooks/NN_name.ipynb``, or ``NN_name.ipynb`` beside
    ``assignment.json``); empty when there is none, and then deleted cells are not looked for.
    """
    for path in (folder / f"{name}.ipynb", PACKAGE_DIR.parent / "notebooks" / f"{name}.ipynb"):
        if path.is_file():
            try:
                nb = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                return []
            found: list[str] = []
            for cell in nb.get("cells", []):
                if cell.get("cell_type") == "code":
                    src = cell.get("source", "")
                    for q in CHECK_RE.findall("".join(src) if isinstance(src, list) else src):
                        if q not in found:
                            found.append(q)
            return found
    return []
