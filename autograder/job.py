"""One submission while the grader runs it: what the grader knows of its processes (the notebook's
and its judge's), their pipes and deadlines, and everything they said. Written by the scheduler
(:mod:`autograder.scheduler`) and the message readers (:mod:`autograder.intake`); read by the
verdict (:mod:`autograder.verdict`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import cgroups, inputs

GRACE = 5.0        # seconds a process has after a deadline, or after it is killed, before it is reaped


@dataclass
class Pending:
    """The unfinished last line read from one of a job's pipes, kept until its newline arrives."""
    data: bytes = b""


@dataclass
class Job:
    index: int
    sub: inputs.Submission
    staging: Path
    uid: int = -1
    scratch: Path | None = None           # the scratch folder on the grader's side (user and weak modes)
    group: cgroups.Group | None = None
    peak_memory: int | None = None
    oom: bool = False
    token: str = ""
    started: float = 0.0
    deadline: float = 0.0
    phase_deadline: float | None = None
    # the submission's process: its messages (msg)
    pid: int | None = None
    msg_r: int = -1
    buf: Pending = field(default_factory=Pending)
    received: int = 0
    exit_status: int | None = None
    ready_at: float | None = None
    cells_done: dict | None = None
    done_at: float | None = None
    cell: int | None = None
    # when each phase ended, for timings.json (autograder.verdict.phases)
    cells_done_at: float | None = None
    judge_done_at: float | None = None
    # the judge
    judge_pid: int | None = None
    jmsg_r: int = -1
    go_w: int = -1                        # one byte on it starts the tests (autograder.judge)
    jbuf: Pending = field(default_factory=Pending)
    judge_exit: int | None = None
    judge_done: dict | None = None
    test: str | None = None
    checks: list[str] | None = None
    cases: dict[tuple[str, int], tuple[bool, str]] = field(default_factory=dict)
    mistakes: dict[str, object] = field(default_factory=dict)   # the judge's ids, by question
    # what went wrong
    killed: str | None = None
    kill_time: float | None = None
    fatal: str | None = None
    malformed: str | None = None
    tamper: list[str] = field(default_factory=list)
    tamper_after: list[str] = field(default_factory=list)      # reported after the tests ran
    suspicious: list[str] = field(default_factory=list)
    # for the hand-grading pages: what the grader read in the notebook, and the figures its cells drew
    info: dict = field(default_factory=dict)
    figure_cells: list[int] | None = None
    figures: list[tuple[int, str]] = field(default_factory=list)     # (cell, path under --out)
    figure_notes: list[tuple[int, str]] = field(default_factory=list)
    figure_bytes: int = 0

    @property
    def done(self) -> bool:
        return self.judge_done is not None
