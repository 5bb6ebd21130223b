"""Lock files that prove whose something is: held (``flock``) by a live batch for as long as it runs,
free once the batch is gone, whatever PID namespace either batch runs in.

A pid says nothing across PID namespaces (a grader in its own namespace cannot see another's pid,
and two graders may have the same one), so the grader never decides from a pid whether a uid, a
cgroup or a folder is a live batch's. It asks the kernel instead: a lock file that a batch took
when it made the thing, held until it has undone it, is free exactly when that batch is gone.

A lock file is removed by whoever holds it when what it guards is gone. Removal races with another
process that opened the file just before and locks it just after; :func:`take` and
:func:`left_behind` check that the file they locked is still the one under its name, so a lock on
a removed file is never taken for a lock on the name.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


def _still_named(fd: int, path: Path) -> bool:
    """Is the file open as ``fd`` still the one at ``path`` (not removed, nor replaced)?"""
    try:
        now = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)


def take(path: Path) -> tuple[int, bool] | None:
    """Lock ``path`` (made when missing, never through a link) for as long as the returned descriptor
    is open: (the descriptor, whether this call made the file), or None when a live process holds it."""
    while True:
        made = False
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW, 0o600)
            made = True
        except FileExistsError:
            try:
                fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
            except FileNotFoundError:        # removed meanwhile by its holder: try again
                continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        if _still_named(fd, path):
            return fd, made
        os.close(fd)                         # a lock on a removed file guards nothing: again


def drop(fd: int, path: Path) -> None:
    """Remove the lock file ``path`` that ``fd`` holds (what it guarded is gone), then let it go."""
    if _still_named(fd, path):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    os.close(fd)


@contextlib.contextmanager
def left_behind(lock: Path) -> Iterator[bool]:
    """Whether what the lock file ``lock`` guards was left by a batch that is gone: True (and the lock
    held, so that nothing takes it meanwhile) when the file is there and no live process holds it;
    False when it is held, or missing (never a batch's, or another lock folder's), or a link.
    Inside, the caller may remove the file (its batch is gone)."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield _still_named(fd, lock)
    finally:
        os.close(fd)
