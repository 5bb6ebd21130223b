"""What one grading takes (:class:`GradeConfig`) and how it fails (:class:`GradingError`).

Everything the engine (:func:`autograder.api.grade`) is told comes in one frozen, keyword-only value:
the command lines (``python -m autograder``, ``course grade``) build it from argv, every other caller
(the Gradescope runner, ``course nbgrader``, the mutant and degenerate suites, the demo) builds it
directly. Nothing the engine reads comes from elsewhere: the students' names the report shows and
the gradebook a shard remembers for the merge are fields here too, not state kept in a module.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from .results import StudentNames

SandboxMode = Literal["auto", "isolated", "user", "weak"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "isolated", "user", "weak")
CELL_TIMEOUT_CAP = 120.0          # seconds: the default per-cell limit, unless the whole run is shorter


class GradingError(Exception):
    """A grading that could not be done; the message says why in one sentence. ``exit_code`` is
    what the command line exits with: 2 for bad input (nothing was graded)."""

    exit_code = 2


class ShardsMissing(GradingError):
    """``course merge`` found some shards' results but not all: nothing was written (exit 1)."""

    exit_code = 1


def default_workers() -> int:
    """Submissions graded at once by default: the machine's cores, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class Shard:
    """Shard ``k`` of ``n`` (k from 0) of the run ``run``: :mod:`autograder.shards` decides which
    rows are its; the merge takes the shards of one run only."""

    k: int
    n: int
    run: str = ""

    def __post_init__(self) -> None:
        if self.n < 1 or not 0 <= self.k < self.n:
            raise GradingError(f"--shard {self.k}/{self.n}: K must be from 0 to N-1 (shards are "
                               "counted from 0)")

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


@dataclass(frozen=True)
class Gradebook:
    """The LMS gradebook a class is graded for (``course grade --gradebook``) and its column."""

    path: Path
    column: str | None = None
    export_partial: bool = False        # rows whose hand grading is not done: exported, not held


@dataclass(frozen=True, kw_only=True)
class GradeConfig:
    """One grading of one assignment's submissions.

    ``submissions``: .ipynb files, folders of them, .zip files; ``assignment``: ``NN_name`` or a
    folder; ``out``: the output folder (with ``shard``, the merge's: the shard writes
    ``out/shards/K-of-N``). ``timeout`` bounds a submission, ``cell_timeout`` (default
    ``min(120, timeout)``) a cell and a test case, ``memory`` (GB) its processes. ``student_names``
    ({(lms, id): name}) name the rows in the report and the hand-grading pages; ``gradebook`` is
    kept in a shard's result for ``course merge``.
    """

    submissions: tuple[Path, ...]
    assignment: str
    out: Path
    workers: int = field(default_factory=default_workers)
    timeout: float = 600.0
    cell_timeout: float | None = None
    memory: float = 4.0
    sandbox: SandboxMode = "auto"
    scratch: Path | None = None
    progress: bool = True
    similarity: bool = True
    shard: Shard | None = None
    cache: bool = False
    student_names: StudentNames = field(default_factory=dict)
    gradebook: Gradebook | None = None

    def __post_init__(self) -> None:
        fix = object.__setattr__            # frozen: the normal forms are set once, here
        fix(self, "submissions", tuple(Path(s) for s in self.submissions))
        fix(self, "assignment", str(self.assignment))
        fix(self, "out", Path(self.out))
        for name in ("timeout", "memory") + (("cell_timeout",) if self.cell_timeout is not None else ()):
            fix(self, name, float(getattr(self, name)))
        fix(self, "student_names", MappingProxyType(dict(self.student_names)))
        if not self.submissions:
            raise GradingError("no submissions given")
        if self.workers < 1:
            raise GradingError("--workers must be at least 1")
        if self.timeout <= 0 or self.memory <= 0:
            raise GradingError("--timeout and --memory must be more than 0")
        if self.sandbox not in SANDBOX_MODES:
            raise GradingError(f"--sandbox must be one of {', '.join(SANDBOX_MODES)}, not {self.sandbox!r}")
        if self.cell_timeout is None:
            fix(self, "cell_timeout", min(CELL_TIMEOUT_CAP, self.timeout))
        elif self.cell_timeout <= 0:
            raise GradingError("--cell-timeout must be more than 0")

