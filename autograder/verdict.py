"""Assembling a submission's result once its processes are gone: its row's ``grading_status`` (and
whether its points are forced to zero), every test case's points and message from the judge's
verdicts, and what the hand-grading pages show (the notebook's answers, figures and outputs).

Only the judge's verdicts earn points; what the submission's process said about itself can only
cost it points (:func:`status`).
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import cast

from . import exercise_rules, inputs, mistakes
from .assignment import Assignment
from .checks import hints
from .csvcells import clean
from .job import Job
from .results import CaseResult, Result
from .status import GradingStatus, Status


def result(job: Job, asg: Assignment, memory: float) -> Result:
    """The row of ``job`` (``memory``: the per-submission cap in GB, for the status that names it)."""
    said, zero = status(job, asg, memory)
    status_ = clean(said.text, 400)     # a status is one line, whatever a submission made it hold
    res = Result(file=job.sub.file, stem=job.sub.stem, status=status_, peak_memory=job.peak_memory,
                 seconds=time.monotonic() - job.started,
                 exec_seconds=((job.done_at or time.monotonic()) - (job.ready_at or job.started)))
    cd = job.cells_done or {}
    res.cell_errors = list(cd.get("errors", []))[:200]
    res.tampering = sorted(set(job.tamper + job.tamper_after))
    res.tampering += [f"suspicious: {s}" for s in job.suspicious]
    done = job.judge_done or {}
    if done:
        res.traffic = {"requests": int(done.get("requests", 0)),
                       "answer_bytes": int(done.get("bytes", 0)),
                       "test_seconds": float(done.get("seconds", 0.0))}
    res.phases = phases(job, res.seconds)
    res.tests_ran = job.done and not zero
    res.output = str(cd.get("output", ""))[:70000]
    res.answers = job.info.get("answers", {})
    res.notebook_note = str(job.info.get("error", ""))
    res.figures = list(job.figures)
    res.figure_notes = list(job.figure_notes)
    res.cell_outputs = cell_outputs(res.answers, cd.get("marks", []), res.output)
    res.answer_code = list(job.info.get("code", []))
    for q in asg.auto:
        earned = 0.0
        all_passed = True
        for c in q.cases:
            passed, message = job.cases.get((q.name, c.index), (False, ""))
            if zero:
                passed = False
            if not message:
                message = "not run" if said.ok else f"not run: {status_}"
            all_passed &= passed
            shown, detail = message, ""
            if c.hidden:
                detail = message
                shown = "passed" if passed else (
                    hints.shown(message, c.failure_message) or "A hidden test failed.")
                if not passed and message.startswith(exercise_rules.MARK):
                    shown = message                 # the exercise's own rules: the grader's words
            elif passed and c.success_message:
                shown = c.success_message
            res.cases.append(CaseResult(question=q.name, name=c.name, points=c.points if passed else 0.0,
                                        max_points=c.points, hidden=c.hidden, passed=passed,
                                        message=shown, detail=detail))
            earned += c.points if passed else 0.0
        if q.all_or_nothing and not all_passed:
            earned = 0.0
        res.question_points[q.name] = earned
        if res.tests_ran and not all_passed:
            res.mistakes += mistakes.named(asg.known_mistakes, q.name, job.mistakes.get(q.name))
    return res


def unrunnable(sub: inputs.Submission, problem: str, asg: Assignment, memory: float) -> Result:
    """The row of a submission that is not run at all (unreadable, another week's notebook, ...)."""
    job = Job(index=-1, sub=sub, staging=Path())
    job.fatal = problem
    job.started = time.monotonic()
    return result(job, asg, memory)


def cell_outputs(answers: dict, marks: list, output: str) -> dict[int, str]:
    """What each manual answer's code cell printed while the grader ran it (from where each
    cell's output starts in the notebook's output)."""
    wanted = {c["cell"] for a in answers.values() for c in a.get("cells", [])
              if c.get("type") == "code" and not c.get("skipped")}
    starts = [(int(c), int(o)) for c, o in marks]
    cut = output.find("\n[... output cut: ")
    kept = len(output) if cut < 0 else cut
    out: dict[int, str] = {}
    for k, (cell, start) in enumerate(starts):
        if cell in wanted:
            end = starts[k + 1][1] if k + 1 < len(starts) else kept
            text = output[min(start, kept):min(end, kept)]
            if cut >= 0 and end > kept:
                text += "\n[output cut: the notebook printed too much]"
            out[cell] = text[:6000]
    return out


def phases(job: Job, seconds: float) -> dict[str, float]:
    """Where a submission's wall time went, for timings.json (seconds; empty unless every phase
    happened): starting its sandbox (its cgroup, the fork, namespaces and new root), running its
    cells, starting its tests once they had run (its judge, started beside the cells, reads the
    notebook and the rules meanwhile), the tests (as the judge timed them), and the clean-up (its
    processes ending and reaped, its cgroup removed, its row assembled)."""
    marks = [job.started, job.ready_at, job.cells_done_at, job.judge_done_at]
    tests = (job.judge_done or {}).get("seconds")
    if any(m is None for m in marks) or type(tests) not in (int, float):
        return {}
    assert isinstance(tests, (int, float))
    started, ready, cells_done, judge_done = cast("list[float]", marks)     # none is None (above)
    return {"sandbox_start": round(ready - started, 4), "cells": round(cells_done - ready, 4),
            "judge_start": round(max(judge_done - cells_done - tests, 0.0), 4), "tests": round(tests, 4),
            "cleanup": round(started + seconds - judge_done, 4)}


def status(job: Job, asg: Assignment, memory: float) -> tuple[GradingStatus, bool]:
    """The row's grading_status, and whether its points are forced to zero."""
    if job.fatal:
        return GradingStatus.parse(job.fatal), True
    if job.malformed:
        return GradingStatus(Status.TAMPERING, "malformed message from the notebook's process "
                                               f"({job.malformed})"), True
    if job.tamper:
        seen = list(dict.fromkeys(job.tamper))
        more = f" (and {len(seen) - 1} more)" if len(seen) > 1 else ""
        return GradingStatus(Status.TAMPERING, f"{seen[0]}{more}"), True
    if job.tamper_after:
        # said by the submission's process after it saw the tests' inputs: its words stay out of
        # the status (the student's feedback shows it), the details are in results/
        return GradingStatus(Status.TAMPERING, "torch or the course changed while the tests ran"), True
    if job.killed and not job.done:
        return GradingStatus.parse(job.killed), job.cells_done is None
    if job.cells_done is None:
        return death(job, f" in cell {job.cell}" if job.cell else "", memory), True
    if not job.done:
        return GradingStatus(Status.GRADING_ERROR, "the tests stopped early; grade this one again"), False
    assert job.judge_done is not None               # job.done
    if job.judge_done.get("gone"):
        where = f" during the tests of {job.test}" if job.test else " during the tests"
        if job.exit_status is None or "stopped answering" in str(job.judge_done.get("gone")):
            return GradingStatus(Status.TIMEOUT, f"the notebook stopped answering{where}"), False
        # no exit code or signal number here: after the tests' inputs, they would be a channel
        if job.oom:
            return death(job, where, memory), False
        return GradingStatus(Status.PROCESS_ENDED, f"{where[1:]} (see results/ for how)"), False
    errors = (job.cells_done or {}).get("errors", [])
    for kind, said in (("timeout", GradingStatus(Status.CELL_TIMEOUT, "cell {cell} {error}")),
                       ("memory", GradingStatus(Status.MEMORY_LIMIT, "cell {cell} ran out of memory")),
                       ("exit", GradingStatus(Status.SYS_EXIT, "in cell {cell}"))):
        hit = [e for e in errors if e.get("kind") == kind]
        if hit:
            return GradingStatus(said.kind, said.detail.format(**hit[0])), False
    checks = set(job.checks or [])
    missing = [q for q in asg.checks if q not in checks]
    if missing:
        return GradingStatus(Status.CELLS_DELETED, f"no check cell for {', '.join(missing)}"), False
    if job.suspicious:
        more = f" (and {len(job.suspicious) - 1} more)" if len(job.suspicious) > 1 else ""
        return GradingStatus(Status.SUSPICIOUS,
                             f"{job.suspicious[0]}{more}; points as earned, read the notebook"), False
    return GradingStatus(Status.OK), False


def death(job: Job, where: str, memory: float) -> GradingStatus:
    """How the submission's process ended, for its status (``where``: "" or " in cell 3", " during
    the tests", ...)."""
    if job.oom:
        return GradingStatus(Status.MEMORY_LIMIT, f"the notebook's processes used more than {memory:g} GB "
                                                  f"together{where}")
    st = job.exit_status or 0
    if os.WIFSIGNALED(st):
        number = os.WTERMSIG(st)
        try:
            sig = signal.Signals(number).name
        except ValueError:                      # real-time signals have no name
            sig = f"signal {number}"
        hint = " (out of memory?)" if sig in ("SIGKILL", "SIGSEGV", "SIGBUS", "SIGABRT") else ""
        if sig == "SIGXCPU":
            return GradingStatus(Status.TIMEOUT, f"CPU time limit{where}")
        return GradingStatus(Status.PROCESS_KILLED, f"{sig}{where}{hint}")
    code = os.waitstatus_to_exitcode(st) if st else 0
    return GradingStatus(Status.PROCESS_EXITED, f"{where[1:]} (exit code {code}: os._exit or a crash)"
                         if where else f"(exit code {code}: os._exit or a crash)")
