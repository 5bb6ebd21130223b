"""The grader's end of the fork servers: the runner's (:func:`autograder.runner.zygote_main`), which
forks the submissions' processes, and the judges' (:mod:`autograder.judges`), which it forks off at
its start and which forks their judges. Start them, hand the judges' server the batch's tests, hand
either a job with its pipe ends, read what they say (a child's pid, a child's exit status), stop them.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ZYGOTE_START_TIMEOUT = 180.0


class ForkServer:
    """The two fork servers, started in ``root`` with the environment ``env``, logging to ``log_path``:
    ``sock`` talks to the runner's, ``judge_sock`` to the judges'."""

    def __init__(self, root: Path, env: dict[str, str], log_path: Path) -> None:
        self.root = root
        self.env = env
        self.log_path = log_path

    def start(self, tests: dict) -> None:
        """Start them, wait until both have imported what their children need (their "up"), and
        hand the judges' server ``tests`` (its ``prepare``: see :mod:`autograder.judges`)."""
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        jparent, jchild = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.runner", "--zygote", str(child.fileno()),
             str(jchild.fileno())],
            cwd=str(self.root), env=self.env, pass_fds=(child.fileno(), jchild.fileno()),
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, start_new_session=True)
        child.close()
        jchild.close()
        self.sock, self.judge_sock = parent, jparent
        for sock in (self.sock, self.judge_sock):
            sock.settimeout(ZYGOTE_START_TIMEOUT)
            try:
                msg = sock.recv(1 << 16)
            except (TimeoutError, OSError):
                msg = b""
            if not msg or json.loads(msg).get("t") != "up":
                raise RuntimeError(f"the runner did not start; see {self.log_path}")
        self._prepare(tests)
        for sock in (self.sock, self.judge_sock):
            sock.setblocking(False)

    def _prepare(self, tests: dict) -> None:
        r, w = os.pipe()
        socket.send_fds(self.judge_sock, [json.dumps({"kind": "prepare"}).encode()], [r])
        os.close(r)
        view = memoryview(json.dumps(tests).encode())
        try:                               # the judges' server reads it as it comes
            while view:
                view = view[os.write(w, view):]
        except OSError as exc:
            raise RuntimeError(f"the judges' fork server did not take the tests; see {self.log_path}") \
                from exc
        finally:
            os.close(w)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, job: dict, fds: list[int], judge: bool = False) -> None:
        """A job for a new child (of the judges' server with ``judge``), with the pipe ends it gets
        (closed here by the caller)."""
        socket.send_fds(self.judge_sock if judge else self.sock, [json.dumps(job).encode()], fds)

    def receive(self, sock: socket.socket) -> tuple[list[dict], bool]:
        """Every message waiting on ``sock``, and whether its server is gone."""
        got: list[dict] = []
        while True:
            try:
                raw = sock.recv(1 << 16)
            except BlockingIOError:
                return got, False
            except OSError:
                return got, True
            if not raw:
                return got, True
            got.append(json.loads(raw))

    def stop(self) -> None:
        """Kill them at once (one died, or the machine killed it: see the scheduler's restart)."""
        self.sock.close()
        self.judge_sock.close()
        self.proc.kill()
        self.proc.wait()
        self.log.close()

    def close(self) -> None:
        """At the end of the batch: their sockets close, so they reap their children and exit."""
        if not hasattr(self, "proc"):
            return
        try:
            self.judge_sock.close()
            self.sock.close()
            self.proc.wait(timeout=10)
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.log.close()
