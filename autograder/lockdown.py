"""User mode: the secret folders closed to other users while any batch on this machine runs.

Without mount namespaces the grader hides the tests, the solutions and the submissions from student
code by taking the group and other permissions off them (``chmod go-rwx``). Two batches may run at
once on one machine (two assignments, two shards): had each put back the modes it found, the first
to finish would reopen the folders while the other's student code still runs, and the second would
"restore" the closed modes it found, leaving them closed for good. So the modes are shared: the first
batch writes down each folder's own mode in a registry, every batch holds a shared lock while it runs,
and the one that finishes last puts the written modes back. A batch that was killed leaves its lock
behind (the kernel drops it) and the registry: the next batch takes the modes from there; and
the last batch kills whatever a killed batch's student code left running before it reopens them.

The registry lives in the grader's own folder (:func:`autograder.sandbox.private_dir`), never read
when anyone else could have written it.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from . import sandbox

REGISTRY = "closed-folders.json"


@contextlib.contextmanager
def _guard() -> Iterator[None]:
    """One batch at a time reads or writes the registry."""
    fd = sandbox.open_lock("closed-folders.guard")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read(path: Path) -> dict[str, int]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise sandbox.SandboxError(f"the registry of closed folders {path} cannot be read ({exc}): "
                                   "put the folders' modes back by hand, then remove it") from None
    if type(data) is not dict or not all(type(k) is str and type(v) is int and 0 <= v <= 0o7777
                                         for k, v in data.items()):
        raise sandbox.SandboxError(f"the registry of closed folders {path} is not what the grader writes: "
                                   "put the folders' modes back by hand, then remove it")
    return data


def _write(path: Path, modes: dict[str, int]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | os.O_NOFOLLOW, 0o600), "w") as f:
        json.dump(modes, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Lockdown:
    """The folders one batch needs closed, closed while it runs (:meth:`close_folders`, then
    :meth:`release` once its student code has stopped)."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = list(paths)
        self._home = sandbox.private_dir()
        self._active: int | None = None

    def close_folders(self) -> None:
        home = self._home
        with _guard():
            registry = _read(home / REGISTRY)         # a killed batch's: the folders' own modes
            for p in self.paths:
                if p not in registry:                 # nobody closed it: this is its own mode
                    with contextlib.suppress(OSError):
                        registry[p] = stat.S_IMODE(os.stat(p).st_mode)
            _write(home / REGISTRY, registry)
            self._active = sandbox.open_lock("closed-folders.active")
            fcntl.flock(self._active, fcntl.LOCK_SH)
            sandbox.lock_down([Path(p) for p in self.paths])

    def release(self) -> None:
        """Put the modes back when no other batch still runs (after killing what a killed batch's
        student code left running); otherwise the last one will."""
        if self._active is None:
            return
        home = self._home
        with _guard():
            try:
                fcntl.flock(self._active, fcntl.LOCK_EX | fcntl.LOCK_NB)
                last = True
            except BlockingIOError:
                last = False
            if last:
                sandbox.kill_orphans()
                for p, mode in _read(home / REGISTRY).items():
                    with contextlib.suppress(OSError):
                        os.chmod(p, mode)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(home / REGISTRY)
            os.close(self._active)
            self._active = None

    @staticmethod
    def modes_written() -> dict[str, int]:
        """The registry as it stands (for tests and for an instructor who wants to see it)."""
        with _guard():
            return _read(sandbox.private_dir() / REGISTRY)
