"""User mode: the secret folders closed to other users while any batch on this machine runs.

Without mount namespaces the grader hides the tests, the solutions and the submissions from student
code by taking the group and other permissions off them (``chmod go-rwx``). Two batches may run at
once on one machine (two assignments, two shards): had each put back the modes it found, the first
to finish would reopen the folders while the other's student code still runs, and the second would
"restore" the closed modes it found, leaving them closed for good. So the modes are shared: the first
batch writes down each folder's own mode in a registry, every batch holds a shared lock while it runs,
and the one that finishes last puts the written modes back. A batch that was killed leaves its lock
behind (the kernel drops it) and the registry: the next batch takes the modes from there.

The registry lives in a folder of the grader's own (root's, 0700), never read when anyone else could
have written it.
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


def _home() -> Path:
    """The grader's own folder for the registry and its locks (made 0700; checked at every use)."""
    home = sandbox.LOCK_DIR / "course-grader-modes"
    try:
        os.mkdir(home, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(home)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
        raise sandbox.SandboxError(f"{home} is not the grader's own folder (a folder of mode 0700 owned "
                                   "by the user the grader runs as): remove it, or set "
                                   "COURSE_GRADER_LOCK_DIR to a folder only that user can write")
    return home


@contextlib.contextmanager
def _guard(home: Path) -> Iterator[None]:
    """One batch at a time reads or writes the registry."""
    fd = os.open(home / "guard.lock", os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
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
        self._home = _home()
        self._active: int | None = None

    def close_folders(self) -> None:
        home = self._home
        with _guard(home):
            registry = _read(home / "modes.json")     # a killed batch's: the folders' own modes
            for p in self.paths:
                if p not in registry:                 # nobody closed it: this is its own mode
                    with contextlib.suppress(OSError):
                        registry[p] = stat.S_IMODE(os.stat(p).st_mode)
            _write(home / "modes.json", registry)
            self._active = os.open(home / "active.lock", os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
            fcntl.flock(self._active, fcntl.LOCK_SH)
            sandbox.lock_down([Path(p) for p in self.paths])

    def release(self) -> None:
        """Put the modes back when no other batch still runs; otherwise the last one will."""
        if self._active is None:
            return
        home = self._home
        with _guard(home):
            try:
                fcntl.flock(self._active, fcntl.LOCK_EX | fcntl.LOCK_NB)
                last = True
            except BlockingIOError:
                last = False
            if last:
                for p, mode in _read(home / "modes.json").items():
                    with contextlib.suppress(OSError):
                        os.chmod(p, mode)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(home / "modes.json")
            os.close(self._active)
            self._active = None

    @staticmethod
    def modes_written() -> dict[str, int]:
        """The registry as it stands (for tests and for an instructor who wants to see it)."""
        home = _home()
        with _guard(home):
            return _read(home / "modes.json")
