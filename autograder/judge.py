"""The judge: runs one submission's tests in the grader's trust domain, against handles.

Forked by the judges' fork server (:mod:`autograder.judges`, which loaded the assignment's test
files once for the batch) when a submission starts; it reads the notebook's code cells itself (for
the rules) while they run, and once they have run it runs every test case with the notebook's
names bound to :class:`course.handles.Handle` objects whose requests go over a pipe to the
submission's process, and reports each verdict to the grader. What comes back over that pipe is
only decoded, never run (:mod:`course.wire`), so the tests' code, expected values, tolerances and
messages stay here, and an answer counts only when it is right.

Pipes: ``report`` (judge -> grader, JSON lines), ``go`` (grader -> judge: one byte once the cells
have run), ``requests`` (judge -> submission, frames) and ``answers`` (submission -> judge, frames).
It never runs student code.
"""
from __future__ import annotations

import inspect
import json
import os
import random
import select
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, cast

from course import handles, wire

from . import exercise_rules
from .checks import hints

MESSAGE_CAP = 4000
GRACE = 3.0


class StudentGone(handles.StudentError):
    """The submission's process stopped answering (it exited, or was killed)."""


class PipeTransport(handles.Transport):
    """Requests over a pipe pair to the submission's :class:`course.serve.Server`."""

    def __init__(self, requests: int, answers: int, cells: list[str],
                 template: list[str] | None = None, by_index: dict[int, str] | None = None) -> None:
        super().__init__()
        self.req, self.ans = requests, answers
        self._cells = cells
        self._by_index = by_index or {}
        self._template = template
        self.deadline = float("inf")
        self.next_id = 1
        self.gone: str | None = None
        self.buf = bytearray()
        self.requests_sent = 0
        self.bytes_received = 0

    def cells(self, obj: Any = None) -> list[str]:
        return list(self._cells)

    def template(self) -> list[str] | None:
        return list(self._template) if self._template else None

    def line_of(self, cell: int, line: int) -> str | None:
        lines = self._by_index.get(cell, "").split("\n")
        return lines[line - 1].strip()[:200] or None if 0 < line <= len(lines) else None

    def _write(self, frame: bytes) -> None:
        view = memoryview(frame)
        while view:
            self._wait(self.req, write=True)
            try:
                n = os.write(self.req, view)
            except BrokenPipeError:
                self._lost("the notebook's process exited")
            view = view[n:]

    def _wait(self, fd: int, write: bool = False) -> None:
        left = self.deadline + GRACE - time.monotonic()
        if left <= 0:
            self._lost("the notebook's process stopped answering", timeout=True)
        r, w, _ = select.select([] if write else [fd], [fd] if write else [], [], left)
        if not r and not w:
            self._lost("the notebook's process stopped answering", timeout=True)

    def _lost(self, why: str, timeout: bool = False) -> None:
        self.gone = why
        raise (handles.StudentTimeout if timeout else StudentGone)(why)

    def _read_frame(self) -> dict:
        while True:
            if len(self.buf) >= 4:
                n = wire.frame_length(bytes(self.buf[:4]))
                if len(self.buf) >= 4 + n:
                    body = bytes(self.buf[4:4 + n])
                    del self.buf[:4 + n]
                    return wire.decode(body, meta=self.meta_ok)
            self._wait(self.ans)
            chunk = os.read(self.ans, 1 << 20)
            if not chunk:
                self._lost("the notebook's process exited")
            self.bytes_received += len(chunk)
            self.buf += chunk

    def exchange(self, frame: bytes) -> dict:
        if self.gone:
            raise StudentGone(self.gone)
        request_id = self.next_id
        self.next_id += 1
        # the request id and the time left travel in a small frame of their own before the request
        limit = max(0.1, min(self.deadline - time.monotonic(), 3600.0))
        self._write(wire.encode({"id": request_id, "limit": limit}) + frame)
        self.requests_sent += 1
        while True:
            try:
                msg = self._read_frame()
            except wire.WireError as exc:
                self._lost(f"the notebook's process sent a malformed answer ({exc})")
            if "callback" in msg:
                self._write(self.answer_callback(msg))
                continue
            if msg.get("id") != request_id:
                continue                      # a late answer to a request that timed out
            return msg


def _seed_everything() -> None:
    import numpy as np

    from course.serve import seed_torch
    random.seed(0)
    np.random.seed(0)
    seed_torch(0)


class _Case:
    """Stands in for ``otter.test_files.test_case`` while a test file is loaded."""

    def __init__(self, **kw: Any) -> None:
        self.kw = kw
        self.func: Any = None

    def __call__(self, func: Any) -> _Case:
        self.func = func
        return self


def _failure(exc: BaseException, filename: str, lines: list[str], q: str) -> str:
    if isinstance(exc, handles.StudentTimeout):
        return f"Test case failed: your code ran over the time limit ({exc})"
    line_no = None
    for fr in traceback.extract_tb(exc.__traceback__):
        if fr.filename == filename:
            line_no = fr.lineno
    message = "Test case failed"
    if line_no is not None and 0 < line_no <= len(lines):
        message += f"\nError at line {line_no} in test {q}:\n  {lines[line_no - 1].strip()}"
    if isinstance(exc, handles.StudentError):
        text = exc.student_text().strip()
    else:
        text = f"{type(exc).__name__}: {exc}".strip()
    return message + "\n" + (text if len(text) <= 1500 else text[:1500] + "...")


@dataclass
class Tests:
    """A batch's test files, loaded (:func:`load_tests`): every case (question's test file, its
    index, the case), public ones first, and the files that did not load (question, number of
    cases, why)."""

    cases: list[tuple[dict, int, _Case]] = field(default_factory=list)
    failed: list[tuple[str, int, str]] = field(default_factory=list)

    def only(self, questions: list[str] | None) -> Tests:
        """The tests of ``questions`` (None: all)."""
        if questions is None:
            return self
        keep = set(questions)
        return Tests([c for c in self.cases if c[0]["question"] in keep],
                     [f for f in self.failed if f[0] in keep])


def load_tests(tests: list[dict]) -> Tests:
    """Every test file's cases, public before hidden (done once per batch, in the judges' fork server)."""
    found = Tests()
    loaded = []
    for test in tests:
        q = test["question"]
        glob: dict[str, Any] = {"__name__": f"test_{q}", "test_case": _Case}
        try:
            exec(compile(test["source"], f"<test {q}>", "exec"), glob)
            cases = [v for v in glob.values() if isinstance(v, _Case)]
        except Exception as exc:
            found.failed.append((q, int(test["cases"]), "the test file did not load: " + str(exc)[:500]))
            continue
        loaded += [(test, i, case) for i, case in enumerate(cases)]
    found.cases = sorted(loaded, key=lambda x: bool(x[2].kw.get("hidden")))     # stable: public first
    return found


def barred_questions(t: handles.Transport, tests: Tests) -> dict[str, str | None]:
    """Per question: why its definitions break its own rules (None: they keep them). Read from the
    notebook's code only, so the judge works it out while the notebook's cells still run."""
    barred: dict[str, str | None] = {}
    for test, _i, _case in tests.cases:
        q = test["question"]
        if q not in barred:
            barred[q] = exercise_rules.verdict(t.cells(), t.template(), test.get("rules"), q)
    return barred


def held_questions(t: handles.Transport, tests: Tests, barred: dict[str, str | None]) -> list[str]:
    """What the rules cannot read whole in the definitions of each question they do not bar (a
    barred one has lost its points already): lines of the row's ``suspicious code`` status, which
    holds the row's points, as earned, for a person to read."""
    found: dict[str, list[str]] = {}
    names: dict[str, list[str]] = {}
    for test, _i, _case in tests.cases:
        q = test["question"]
        if q not in found and not barred.get(q):
            found[q] = exercise_rules.held(t.cells(), t.template(), test.get("rules"), q)
            names[q] = list((test.get("rules") or {}).get("names", []))
    return exercise_rules.owners(found, t.cells(), names)


def run_tests(t: PipeTransport, tests: list[dict], case_timeout: float, report: Any) -> None:
    """Load the test files and run every case (:func:`run_cases`)."""
    run_cases(t, load_tests(tests), case_timeout, report)


def run_cases(t: PipeTransport, tests: Tests, case_timeout: float, report: Any,
              barred: dict[str, str | None] | None = None) -> None:
    """Run every test case; ``report(dict)`` gets one message per case (``barred``: what
    :func:`barred_questions` found, when it was worked out already).

    Every public case runs before any hidden one. A public case's message goes to the student in
    full, and may quote what the student's code said; run first, it is written before the
    submission's process has seen a single input of a hidden test, so it cannot carry them out."""
    handles.use(t)
    for q, n, why in tests.failed:
        for i in range(n):
            report({"t": "case", "q": q, "i": i, "passed": False, "message": why})
    barred = barred_questions(t, tests) if barred is None else barred
    current = None
    reset = False
    failed: dict[str, dict] = {}              # the questions whose tests failed: their test file
    for test, i, case in tests.cases:
        q = test["question"]
        filename = f"<test {q}>"
        lines = test["source"].split("\n")
        if q != current:
            if not t.gone:            # the row's status names the question where the notebook was lost
                report({"t": "test", "q": q})
            current = q
        if barred[q]:                 # the course's own answer, or what the text says to do without
            report({"t": "case", "q": q, "i": i, "passed": False,
                    "message": cast(str, barred[q])[:MESSAGE_CAP]})
            continue
        t.deadline = time.monotonic() + case_timeout
        _seed_everything()
        missing: list[str]
        passed, message, missing = False, "", []
        try:
            kwargs, missing = _arguments(t, list(inspect.signature(case.func).parameters), reset)
            case.func(**kwargs)
            passed, message = True, "Test case passed"
        except Exception as exc:
            message = hints.judge_message(exc, _failure(exc, filename, lines, q), bool(case.kw.get("hidden")))
            if missing:
                message += ("\n(not defined in the notebook: " + ", ".join(missing)
                            + " -- was its cell deleted or not run?)")
        finally:
            t.deadline = float("inf")
            t.callbacks.clear()
            t.built.clear()
            t.swaps.clear()
        report({"t": "case", "q": q, "i": i, "passed": passed, "message": message[:MESSAGE_CAP]})
        reset = True                  # the next check's first request forgets this one's handles
        if not passed:
            failed[q] = test
    for q, test in failed.items():
        if test.get("mistakes"):
            name_mistakes(t, q, test, case_timeout, report)


PROBE_SECONDS = 10.0          # for naming one question's mistakes: seven small calls of one piece


def name_mistakes(t: PipeTransport, q: str, test: dict, case_timeout: float, report: Any) -> None:
    """After every case has been reported: the known mistakes of question ``q`` that the student's
    pieces behave like (:mod:`autograder.checks.mistakes`), reported as ``{"t": "mistake"}``. Nothing
    here changes the row: a piece that cannot be asked, raises everywhere, runs out of time or ends
    its process names nothing, and the row's status is what its tests made it."""
    from .checks import mistakes
    if t.gone:                # the process ended or stopped answering in the tests: that is the row's
        report({"t": "mistake", "q": q, "ids": []})
        return
    report({"t": "probe", "q": q})
    ids: list[str] = []
    t.deadline = time.monotonic() + min(case_timeout, PROBE_SECONDS)
    try:
        def lookup(piece: str) -> Any:
            found, _missing = t.lookup([piece], reset=True)
            _seed_everything()
            return None if found.get(piece) is None else handles.student(found[piece])

        ids = mistakes.name_all(lookup, test, t.template() or [], (StudentGone, handles.StudentTimeout))
    except Exception:         # the process gone or out of time here says nothing of its tests
        ids = []
        t.gone = None         # (it was None before: see above)
    finally:
        t.deadline = float("inf")
        t.callbacks.clear()
        t.built.clear()
        t.swaps.clear()
    report({"t": "mistake", "q": q, "ids": ids})


def _arguments(t: PipeTransport, names: list[str], reset: bool) -> tuple[dict[str, Any], list[str]]:
    """The notebook's values for a check's parameters (None for a name that is not there, as Otter
    does) and the names that are not there: one request, which first forgets the last check's
    handles (``reset``); name by name when that request as a whole fails."""
    if names or reset:
        try:
            found, missing = t.lookup(names, reset=reset)
            return {n: found.get(n) for n in names}, missing
        except StudentGone:
            raise
        except handles.StudentError:
            pass
    kwargs: dict[str, Any] = {}
    missing = []
    for p in names:
        try:
            kwargs[p] = t.request("global", p, name=p)
        except StudentGone:
            raise
        except handles.StudentError:
            kwargs[p] = None
            missing.append(p)
    return kwargs, missing


def notebook_cells(path: str, given_code: list[str]) -> tuple[list[str], list[str], list[str],
                                                                dict[int, str]]:
    """From the submitted notebook (read here, not from the submission's process): its code cells,
    the questions whose ``grader.check`` cells it has, and what its own code does that the rules
    do not allow (course/rules/: every cell is read for what it binds; cells identical to a given
    cell of the blank notebook, the setup cell among them, are the course's and not searched), and
    the cells by their index (the lines a student's error is shown at)."""
    from course.rules import suspicious

    from .notebook import CHECK_RE, read_notebook, setup_cell
    with open(path, "rb") as f:
        cells, _problem = read_notebook(f.read(), setup_cell(given_code))   # as the runner reads it
    cells = cells or []
    sources = [c["source"] for c in cells if not c["ignore"]]        # the rules read what runs
    checks = sorted({q for src in sources for q in CHECK_RE.findall(src)})
    odd = suspicious([c["source"] for c in cells], [c["index"] for c in cells], given_code)
    return sources, checks, odd, {c["index"]: c["source"] for c in cells}


def judge_main(job: dict, report_fd: int, go_fd: int, requests_fd: int, answers_fd: int,
               tests: Tests, given: list[str], case_timeout: float) -> int:
    """Entry point in a judge, forked by the judges' fork server (:mod:`autograder.judges`) when the
    submission starts. While its cells run, it reads the notebook and the rules; it runs the tests
    once the grader says the cells are done (a byte on ``go_fd``; the pipe closed without one: the
    notebook never got there, and there is nothing to judge). Returns the exit code."""
    import resource

    from .cgroups import join
    if job.get("cgroup"):
        join(list(job["cgroup"]))
    # answers are size-capped, but a test that trusts a reported shape could still allocate a lot:
    # a cap on this process's memory makes that fail the test, not the machine
    limit = int(job.get("memory_bytes", 4 * 2**30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    def report(msg: dict) -> None:
        line = (json.dumps(msg) + "\n").encode()
        while line:
            n = os.write(report_fd, line)
            line = line[n:]

    only = job.get("only")
    tests = tests.only([str(q) for q in only] if type(only) is list else None)
    cells, checks, odd, by_index = notebook_cells(job["staging"], given)
    t = PipeTransport(requests_fd, answers_fd, cells, given, by_index)
    barred = barred_questions(t, tests)
    report({"t": "notebook", "checks": checks, "suspicious": odd + held_questions(t, tests, barred)})
    if os.read(go_fd, 1) != b"g":
        return 0
    os.close(go_fd)
    started = time.monotonic()
    run_cases(t, tests, case_timeout, report, barred)
    from course.serve import ANOTHER_PROCESS
    if any(ANOTHER_PROCESS in seen for seen in t.runtime_forbidden.values()):
        report({"t": "suspicious", "found": [f"ran {ANOTHER_PROCESS}"]})   # its work was out of sight
    report({"t": "done", "requests": t.requests_sent, "bytes": t.bytes_received,
            "seconds": round(time.monotonic() - started, 3), "gone": t.gone})
    os.close(requests_fd)
    return 0
