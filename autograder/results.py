"""What grading finds out about one submission (:class:`Result`, one :class:`CaseResult` per test
case), and how its points are written: read by the report, the hand-grading pages, the LMS export and
the Gradescope PDFs alike.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .inputs import lms_id
from .mistakes import Named
from .status import GradingStatus


@dataclass
class CaseResult:
    """The outcome of one test case for one submission."""

    question: str
    name: str
    points: float
    max_points: float
    hidden: bool
    passed: bool
    message: str
    detail: str = ""


@dataclass
class Result:
    """Everything known about one graded submission."""

    file: str
    stem: str
    status: str
    cases: list[CaseResult] = field(default_factory=list)
    question_points: dict[str, float] = field(default_factory=dict)
    cell_errors: list[dict] = field(default_factory=list)
    output: str = ""
    tampering: list[str] = field(default_factory=list)
    tests_ran: bool = False
    seconds: float = 0.0
    exec_seconds: float = 0.0
    peak_memory: int | None = None       # bytes, all the submission's processes together (its cgroup)
    traffic: dict = field(default_factory=dict)   # the judge's requests: count, bytes back, seconds
    phases: dict = field(default_factory=dict)    # seconds per phase (autograder.verdict.phases)
    # for hand grading: the manual answers read from the notebook (autograder.notebook_info; each
    # saved image as {"figure": path}), the figures its answer cells drew under the grader (cell,
    # path), both PNG files already under the output folder; notes on figures dropped; and what
    # each answer cell printed
    answers: dict = field(default_factory=dict)
    notebook_note: str = ""
    figures: list[tuple[int, str]] = field(default_factory=list)
    figure_notes: list[tuple[int, str]] = field(default_factory=list)
    cell_outputs: dict[int, str] = field(default_factory=dict)
    answer_code: list[dict] = field(default_factory=list)   # every answer cell, for autograder.similarity
    sha256: str = ""        # of the notebook's bytes as submitted: what a hand grade is given to
    # the known mistakes the judge recognised in the failed questions (points are unchanged)
    mistakes: list[Named] = field(default_factory=list)

    @property
    def total(self) -> float:
        return float(sum(self.question_points.values()))

    @property
    def grading(self) -> GradingStatus:
        """``status`` read as its kind and its words (:mod:`autograder.status`)."""
        return GradingStatus.parse(self.status)


def num(x: float) -> str:
    """Points as Otter writes them (pandas floats): 2.0, 1.5, 0.6667."""
    return repr(float(round(x, 4)))


def percent(total: float, possible: float) -> float:
    return total / possible if possible else 0.0


EXTRA_COLUMNS = ["id", "manual_points_earned", "final_points_earned"]


def student_id(file: str) -> str:
    """The LMS's identifier of the student in a row name (Canvas user id, Moodle participant id)."""
    found = lms_id(file)
    return found[1] if found else ""


# {(lms, id): the student's name}, from the gradebook a class is graded for (instructor.lms): the
# report and the hand-grading pages name the students so, beside the file
StudentNames = Mapping[tuple[str, str], str]
NO_NAMES: StudentNames = MappingProxyType({})


def student_name(file: str, names: StudentNames) -> str:
    """The student's name in ``names`` (as the gradebook gives it), or ''."""
    found = lms_id(file)
    return names.get(found, "") if found else ""
