"""The judges' fork server: what every submission's judge (:mod:`autograder.judge`) needs, made once
per batch, and a judge forked from it per submission.

The runner's fork server (:func:`autograder.runner.zygote_main`) forks this server when it starts,
before it has run anything, so that it shares torch and the course with it; from then on the two
never meet. This server imports the grader's side (the judge, the rules), is handed the batch's
tests, loads them (each test file compiled and run for its cases once), imports what their bodies
import and reads the blank notebook against the rules; then it forks one judge per submission
(:func:`autograder.forking.serve_forks`), which finds all of it ready. The submissions' processes
are forked by the runner's server, which never holds a test: nothing here is in their memory.

The grader sends one ``prepare`` message first, with the read end of a pipe that brings one JSON
document: ``tests`` (:meth:`autograder.assignment.Assignment.tests_payload`), ``given_code`` and
``case_timeout``. Each later message is a judge's job (:meth:`autograder.scheduler.Scheduler.start`).
"""
from __future__ import annotations

import ast
import json
import os
import socket

JUDGE_PRELOAD = ["autograder.judge", "autograder.exercise_rules", "autograder.cgroups", "course.rules",
                 "course.rules.check", "course.rules.exercise", "course.handles", "course.wire"]


def judge_server_main(sock_fd: int) -> int:
    """Serve the grader on ``sock_fd``: the batch's tests, then one judge per job, until it closes."""
    from . import forking, judge

    for name in JUDGE_PRELOAD:
        __import__(name)
    sock = socket.socket(fileno=sock_fd)
    sock.setblocking(True)
    forking.send_up(sock)
    msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, 1)
    if not msg or json.loads(msg).get("kind") != "prepare" or len(fds) != 1:
        return 2
    control = json.loads(read_all(fds[0]))
    tests = judge.load_tests(control["tests"])
    given = [str(c) for c in control.get("given_code", [])]
    case_timeout = float(control["case_timeout"])
    warm(control["tests"], given)

    def run_judge(job: dict, fds: list[int]) -> int:
        # fds: the four descriptors judge_main takes next (mypy cannot know a list's length)
        return judge.judge_main(job, *fds, tests=tests, given=given,  # type: ignore[misc, arg-type]
                                case_timeout=case_timeout)

    forking.serve_forks(sock, run_judge)
    return 0


def read_all(fd: int) -> bytes:
    data = bytearray()
    while chunk := os.read(fd, 1 << 20):
        data += chunk
    os.close(fd)
    return bytes(data)


def warm(tests: list[dict], given: list[str]) -> None:
    """What every judge would otherwise do again: import the modules the tests' bodies import and
    those the rules may look names up in (matplotlib, IPython's transformer: seconds a judge, else),
    and read the blank notebook against the rules (the rules remember it; most cells of every
    notebook are its cells)."""
    from course.rules.allowed import ALLOWED_MODULES
    for name in sorted(imported_modules(tests) | ALLOWED_MODULES | {"IPython.core.inputtransformer2"}):
        try:
            __import__(name)
        except Exception:       # the test (or the rule) that imports it fails as it would have
            pass
    from course.rules import static_uses
    from course.rules.reading import read

    read(tuple(given), frozenset(given))
    static_uses([], [], given)


def imported_modules(tests: list[dict]) -> set[str]:
    """The modules the test files import anywhere, in their bodies too (absolute imports only)."""
    found: set[str] = set()
    for test in tests:
        try:
            tree = ast.parse(test["source"])
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
                found.update(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
    return {name for name in found if not name.startswith("otter")}
