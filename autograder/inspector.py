"""The notebook reader of a batch: :mod:`autograder.notebook_info` run as a process of its own over
every staged notebook, each notebook bounded in time.

The reader writes one small JSON document per notebook, in order. The grader watches them appear:
a notebook that takes more than SECONDS_PER_NOTEBOOK to read (or that the reader dies on: out of
memory) has its reader killed and gets ``{"error": "not inspected (...)"}``; a new reader takes the
notebooks after it. One slow or hostile notebook thus costs its own row its hand-grading answers
and its week check, never another row's.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

SECONDS_PER_NOTEBOOK = 15.0
POLL = 0.02


class Inspector:
    """Reads ``items`` ((row index, staged notebook, where its JSON goes)) with one reader at a time."""

    def __init__(self, items: list[tuple[int, str, str]], job: dict, cwd: Path, log: Path,
                 repo: Path, seconds_per_notebook: float = SECONDS_PER_NOTEBOOK,
                 command: list[str] | None = None) -> None:
        self.items = items
        self.job = job
        self.cwd = cwd
        self.log = log
        self.repo = repo
        self.limit = seconds_per_notebook
        self.command = command or [sys.executable, "-m", "autograder.notebook_info"]
        self.proc: subprocess.Popen | None = None
        self.pos = 0                      # the first item without its JSON yet
        self.since = 0.0                  # when the reader began that item
        self.slow: dict[int, str] = {}    # row index -> why it was not read
        self._spawn()

    def _spawn(self) -> None:
        self.since = time.monotonic()
        if self.pos >= len(self.items):
            return
        job = dict(self.job, items=[[src, dest] for _, src, dest in self.items[self.pos:]])
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                self.command, cwd=str(self.cwd),
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(self.repo),
                     "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"},
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
        assert self.proc.stdin is not None          # stdin=PIPE
        try:
            self.proc.stdin.write(json.dumps(job).encode())
            self.proc.stdin.close()
        except BrokenPipeError:
            pass

    def _advance(self) -> None:
        while self.pos < len(self.items) and os.path.exists(self.items[self.pos][2]):
            self.pos += 1
            self.since = time.monotonic()

    def _skip(self, why: str) -> None:
        """Give up on the current item, and start a new reader on the ones after it."""
        self.kill()
        self.slow[self.items[self.pos][0]] = why
        self.pos += 1
        self._spawn()

    def wait(self) -> dict[int, dict]:
        """Every item's document (read back from its JSON), by row index."""
        while True:
            self._advance()
            if self.pos >= len(self.items):
                break
            if self.proc is not None and self.proc.poll() is not None:
                self._advance()               # it may have written the last one as it exited
                if self.pos < len(self.items):
                    self._skip("not inspected (the reader stopped on it)")
            elif time.monotonic() - self.since > self.limit:
                self._skip(f"not inspected (it took over {self.limit:g} s to read)")
            else:
                time.sleep(POLL)
        self.kill()
        return self._documents()

    def _documents(self) -> dict[int, dict]:
        info: dict[int, dict] = {}
        for i, _src, dest in self.items:
            if i in self.slow:
                info[i] = {"error": self.slow[i]}
                continue
            try:
                if os.path.getsize(dest) <= 64 * 2**20:
                    doc = json.loads(Path(dest).read_text(encoding="utf-8"))
                    info[i] = doc if isinstance(doc, dict) else {"error": "not inspected"}
                else:
                    info[i] = {"error": "not inspected"}
            except (OSError, ValueError):
                info[i] = {"error": "not inspected"}
            Path(dest).unlink(missing_ok=True)
        return info

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
