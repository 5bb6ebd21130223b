"""Reading what a running submission sends: the notebook's process (progress and self-reports, all
untrusted, each message checked field by field by :mod:`autograder.messages`) and its judge
(verdicts, trusted: the judge runs no student code), and writing the judge its control message.

What a message means for the submission's processes (kill them, start the judge, stop watching a
pipe) is the scheduler's to do: :class:`Intake` asks it through :class:`Events`.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Protocol

from . import messages, notebook_info
from . import runner as runner_limits
from .assignment import Assignment
from .csvcells import clean
from .job import GRACE, Job, Pending
from .status import GradingStatus, Status

# what a submission's process may say about why it could not run: its row's status is one of these
# and a short, cleaned detail; anything else it says is marked as its own words
FATAL_KINDS = {s.value: s for s in (Status.UNREADABLE_NOTEBOOK, Status.SANDBOX_FAILED, Status.GRADER_ERROR)}
MSG_BYTES_CAP = 8 * 2**20


class Events(Protocol):
    """What the scheduler does when a message asks for it."""

    def kill(self, job: Job, reason: str) -> None: ...

    def start_judge(self, job: Job) -> None:
        """The cells have run: the judge runs the tests."""

    def forget(self, fd: int) -> None:
        """Stop watching ``fd`` (it is closed right after)."""


AFTER_CELLS = GradingStatus(Status.GRADING_ERROR, "the notebook's process stopped after its cells ran; "
                            "grade this one again").text


def fatal_status(reason: str, after_cells: bool = False) -> str:
    """The status of a row whose process reported that it could not run: one of FATAL_KINDS with
    its detail cleaned and cut, or the process's own words, marked as such. Said once its cells have
    run (``after_cells``), it is whatever the notebook's code chose to say, when it chose (after a
    failed test, say): the row is to be graded again, never read as unreadable or exported."""
    if after_cells:
        return AFTER_CELLS
    kind, _, detail = reason.partition(": ")
    if kind in FATAL_KINDS:
        return GradingStatus(FATAL_KINDS[kind], clean(detail, 200)).text
    return GradingStatus(Status.NOTEBOOK_ERROR, clean(reason, 120)).text


def read_lines(job: Job, fd: int, pending: Pending, cap: int,
               line_cap: int | None = None) -> tuple[list[bytes], bool]:
    """Complete lines available on ``fd``; (lines, closed). Raises OverflowError past ``cap``;
    stops reading when an unfinished line is longer than ``line_cap``."""
    lines: list[bytes] = []
    buf = pending.data
    closed = False
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            closed = True
            break
        job.received += len(chunk)
        if job.received > cap:
            pending.data = b""
            raise OverflowError
        buf += chunk
        *complete, buf = buf.split(b"\n")
        lines += complete
        if line_cap is not None and len(buf) > line_cap:
            break
    pending.data = buf
    return lines, closed


def keep_figure(job: Job, msg: dict, out: Path) -> None:
    """A figure a cell drew (already parsed field by field): kept when it is a PNG within the
    caps and from a cell whose figures were asked for; else dropped with a note. Kept figures go
    straight to ``out`` (the grader holds no images)."""
    cell, data = msg["cell"], msg["png"]
    note = msg.get("note")
    if job.figure_cells is not None and cell not in job.figure_cells:
        note = "a figure from a cell that is not an answer (dropped)"
    elif data:
        problem = notebook_info.check_png(data, runner_limits.FIGURE_BYTES)
        if problem:
            note = f"a figure dropped: {problem}"
        elif len(job.figures) >= runner_limits.FIGURES or \
                job.figure_bytes + len(data) > runner_limits.FIGURE_TOTAL_BYTES:
            note = "a figure dropped: more figures than are kept"
        else:
            n = 1 + sum(1 for c, _ in job.figures if c == cell)
            path = f"figures/{job.sub.stem}/cell{cell:03d}-{n}.png"
            try:
                (out / path).parent.mkdir(parents=True, exist_ok=True)
                (out / path).write_bytes(data)
            except OSError as exc:
                note = f"a figure could not be written: {exc.strerror}"
            else:
                job.figures.append((cell, path))
                job.figure_bytes += len(data)
                return
    if note and len(job.figure_notes) < 50:
        job.figure_notes.append((cell, note))


class Intake:
    """The readers of one batch's pipes: ``out`` is its output folder (figures), ``cell_timeout``
    its seconds per cell and per test case (the deadlines each message sets)."""

    def __init__(self, asg: Assignment, out: Path, cell_timeout: float, events: Events) -> None:
        self.asg = asg
        self.out = out
        self.cell_timeout = cell_timeout
        self.events = events

    def read_messages(self, job: Job) -> None:
        """Messages from the submission's process: progress and self-reports, all untrusted."""
        if job.msg_r < 0:
            return
        try:
            lines, closed = read_lines(job, job.msg_r, job.buf, MSG_BYTES_CAP, messages.MAX_LINE)
        except OverflowError:
            self.events.kill(job, GradingStatus(Status.GRADING_ERROR,
                                                "the submission flooded the grader with messages").text)
            return
        if len(job.buf.data) > messages.MAX_LINE and not job.malformed:   # a line that never ends
            job.malformed = "a message too long"
            job.buf.data = b""
            self.events.kill(job, "malformed message")
        for line in lines:
            if job.malformed:
                break
            try:
                msg = messages.parse_submission(line)
            except messages.Malformed as exc:
                job.malformed = str(exc)     # the row's status; nothing more to learn from it
                self.events.kill(job, "malformed message")
                continue
            self.handle(job, msg)
        if closed:
            self.events.forget(job.msg_r)
            os.close(job.msg_r)
            job.msg_r = -1

    def handle(self, job: Job, msg: dict) -> None:
        """One parsed message of the submission's process, in the order the protocol allows."""
        t = msg["t"]
        now = time.monotonic()
        if t == "ready" and job.ready_at is None:
            job.ready_at = now
        elif t == "fatal" or (t == "unreadable" and job.cells_done is None):
            job.fatal = job.fatal or fatal_status(msg["reason"], job.cells_done is not None)
            if msg.get("traceback"):
                print(f"course grade: {job.sub.file}: {msg['traceback']}", file=sys.stderr)
        elif t == "cell" and job.cells_done is None:
            job.cell = msg["i"]
            job.phase_deadline = now + self.cell_timeout + GRACE
        elif t == "figure" and job.cells_done is None:
            keep_figure(job, msg, self.out)
        elif t == "cells_done" and job.cells_done is None:
            job.cells_done = msg
            job.cells_done_at = now
            job.cell = None
            job.tamper += msg["tamper"]
            job.phase_deadline = now + self.cell_timeout + GRACE
            self.events.start_judge(job)
        elif t == "done" and job.cells_done is not None and job.done_at is None:
            job.tamper_after += msg["tamper"]
            job.done_at = now
        else:
            job.malformed = f"a {t!r} message out of order"
            self.events.kill(job, "malformed message")

    def read_judge(self, job: Job) -> None:
        """The judge's verdicts (trusted: the judge runs no student code)."""
        if job.jmsg_r < 0:
            return
        try:
            lines, closed = read_lines(job, job.jmsg_r, job.jbuf, 64 * MSG_BYTES_CAP)
        except OverflowError:
            lines, closed = [], True
        now = time.monotonic()
        for line in lines:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            t = msg.get("t") if isinstance(msg, dict) else None
            if t == "notebook":
                job.checks = [str(c) for c in msg.get("checks", [])]
                job.suspicious = [str(c)[:200] for c in msg.get("suspicious", [])][:20]
            elif t == "suspicious":                     # seen while the tests ran
                found = [str(c)[:200] for c in msg.get("found", [])]
                job.suspicious = list(dict.fromkeys(job.suspicious + found))[:20]
            elif t == "test":
                job.test = str(msg.get("q"))
                n = sum(len(q.cases) for q in self.asg.auto if q.name == job.test)
                job.phase_deadline = now + (self.cell_timeout + 5) * max(n, 1) + GRACE
            elif t == "probe":                          # naming a failed question's mistakes
                job.phase_deadline = now + self.cell_timeout + 5 + GRACE
            elif t == "mistake":
                job.mistakes[str(msg.get("q"))] = msg.get("ids")
            elif t == "case":
                job.cases[(str(msg.get("q")), int(msg.get("i", -1)))] = (
                    msg.get("passed") is True, str(msg.get("message", ""))[:4000])
            elif t == "done":
                job.judge_done = msg
                job.judge_done_at = now
                job.phase_deadline = now + GRACE + 10     # the submission sends its last report
            elif t == "fatal":
                job.fatal = job.fatal or GradingStatus(Status.JUDGE_ERROR, str(msg.get("reason"))[:200]).text
                print(f"course grade: judge of {job.sub.file}: {msg.get('traceback', '')}", file=sys.stderr)
        if closed:
            self.events.forget(job.jmsg_r)
            os.close(job.jmsg_r)
            job.jmsg_r = -1
