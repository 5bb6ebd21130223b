"""The loop of a fork server: the runner's (:func:`autograder.runner.zygote_main`, which forks the
processes that run submissions) and the judges' (:func:`autograder.judges.judge_server_main`, which
forks the processes that run their tests).

The grader talks to a fork server over a socket: a job (JSON) with the pipe ends of the child it asks
for; the server answers with the child's pid and, once it has exited, its exit status. The loop waits
with plain ``select`` on the socket and on a pipe that SIGCHLD wakes (an exit is reported at once):
no epoll or other kernel object that a child could inherit and use to stall it (a child closes every
inherited descriptor anyway, before it runs anything), and the socket is only read without blocking.
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import traceback
from collections.abc import Callable
from typing import Any, cast

FATAL_CODE = 71


def serve_forks(sock: socket.socket, run_child: Callable[[dict, list[int]], int],
                keep: Callable[[], list[int]] = list) -> None:
    """Fork one child per job that arrives on ``sock``; each runs ``run_child(job, fds)`` in a
    session of its own with every descriptor closed but its own ``fds`` and ``keep()``, and exits
    with what it returns. Returns when ``sock`` closes (after reaping the children it knows)."""
    wake_r, wake_w = os.pipe()
    for fd in (wake_r, wake_w):
        os.set_blocking(fd, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)       # a handler, so that the wake-up fd is written
    signal.set_wakeup_fd(wake_w)
    sock.setblocking(True)
    jobs: dict[int, str] = {}
    try:
        while True:
            try:
                readable, _, _ = select.select(cast("list[socket.socket | int]", [sock, wake_r]), [], [], 1.0)
            except InterruptedError:
                readable = []
            if wake_r in readable:
                _drain(wake_r)
            if sock in readable:
                try:
                    msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 20, 4, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    msg, fds = None, []
                if msg == b"":
                    _reap(jobs, sock)
                    return
                if msg:
                    job = json.loads(msg)
                    pid = os.fork()
                    if pid == 0:
                        signal.set_wakeup_fd(-1)
                        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                        _child(job, fds, sock, run_child, keep())
                    for fd in fds:
                        os.close(fd)
                    jobs[pid] = job["id"]
                    sock.send(json.dumps({"t": "pid", "id": job["id"], "pid": pid}).encode())
            _reap(jobs, sock)
    finally:
        signal.set_wakeup_fd(-1)


def _child(job: dict, fds: list[int], sock: socket.socket, run_child: Callable[[dict, list[int]], int],
           keep: list[int]) -> None:
    code = 70
    try:
        os.setsid()
        sock.close()
        close_other_fds(fds + keep)
        code = run_child(job, fds)
    except BaseException as exc:
        code = FATAL_CODE
        tb = traceback.format_exc(limit=8)[-1500:]
        try:
            os.write(fds[0], (json.dumps({"t": "fatal", "reason": f"grader error: {short(exc)}",
                                          "traceback": tb}) + "\n").encode())
        except (OSError, IndexError):
            pass
    finally:
        os._exit(code)


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def close_other_fds(keep: list[int]) -> None:
    """Close every inherited descriptor from 3 up but ``keep`` (the fork server's socket, the
    grader's log, other children's pipes, anything a library opened: nothing a submission may
    touch). 0, 1 and 2 are the fork server's (/dev/null and its log); the submission's process
    points them at /dev/null before any student code."""
    keep = sorted(set(keep))
    low = 3
    for fd in keep + [2**31 - 1]:
        if fd >= low:
            os.closerange(low, fd)
        low = max(low, fd + 1)


def _reap(jobs: dict[int, str], sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in jobs:
            job_id = jobs.pop(pid)
            try:
                sock.send(json.dumps({"t": "exit", "id": job_id, "status": status}).encode())
            except OSError:
                pass


def short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) <= 500 else text[:500] + "..."


def send_up(sock: socket.socket, **extra: Any) -> None:
    """Tell the grader this server is ready for jobs."""
    sock.send(json.dumps({"t": "up", **extra}).encode())
