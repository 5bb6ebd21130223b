"""The grader's end of the fork server (:func:`autograder.runner.zygote_main`): start it, hand it a
job with its pipe ends, read what it says (a child's pid, a child's exit status), stop it.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

ZYGOTE_START_TIMEOUT = 180.0


class ForkServer:
    """One fork server, started in ``root`` with the environment ``env``, logging to ``log_path``."""

    def __init__(self, root: Path, env: dict[str, str], log_path: Path) -> None:
        self.root = root
        self.env = env
        self.log_path = log_path

    def start(self) -> None:
        """Start it and wait until it has imported what every child needs (its "up")."""
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.runner", "--zygote", str(child.fileno())],
            cwd=str(self.root), env=self.env, pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, start_new_session=True)
        child.close()
        self.sock = parent
        self.sock.settimeout(ZYGOTE_START_TIMEOUT)
        try:
            msg = self.sock.recv(1 << 16)
        except (TimeoutError, OSError):
            msg = b""
        if not msg or json.loads(msg).get("t") != "up":
            raise RuntimeError(f"the runner did not start; see {self.log_path}")
        self.sock.setblocking(False)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, job: dict, fds: list[int]) -> None:
        """A job for a new child, with the pipe ends it gets (closed here by the caller)."""
        socket.send_fds(self.sock, [json.dumps(job).encode()], fds)

    def receive(self) -> tuple[list[dict], bool]:
        """Every message waiting on the socket, and whether the fork server is gone."""
        got = []
        while True:
            try:
                raw = self.sock.recv(1 << 16)
            except BlockingIOError:
                return got, False
            if not raw:
                return got, True
            got.append(json.loads(raw))

    def stop(self) -> None:
        """Kill it at once (it died, or the machine killed it: see the scheduler's restart)."""
        self.sock.close()
        self.proc.kill()
        self.proc.wait()
        self.log.close()

    def close(self) -> None:
        """At the end of the batch: its socket closes, so it reaps its children and exits."""
        if not hasattr(self, "proc"):
            return
        try:
            self.sock.close()
            self.proc.wait(timeout=10)
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.log.close()
