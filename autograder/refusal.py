"""The machine's refusals as one sentence: a full disk, a quota, a read-only file system, no
permission, an I/O error, on the output folder, the scratch folder, the grader's lock folder or a
submission.

Every command that writes runs through :func:`run` (``course VERB``, :mod:`instructor.cli`;
``python -m autograder``): such an error ends it with exit code 1 and one sentence on stderr that
names the path and what to do, never a traceback. The commands write through staging folders and
temporary files (:func:`autograder.workspace.begin_outputs`, :func:`instructor.manual.write_all`),
so the output folder is as it was. Any other error is a bug and keeps its traceback.
"""
from __future__ import annotations

import errno
import os
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

# what the machine refuses, not what the grader got wrong
REFUSED = {errno.ENOSPC: "no space left on the disk", errno.EDQUOT: "the disk quota is used up",
           errno.EROFS: "a read-only file system", errno.EACCES: "permission denied",
           errno.EPERM: "operation not permitted", errno.EIO: "an input/output error"}
EXIT = 1
OUT_FIRST = ("course merge", "course manual", "course mark", "course pdfs", "course similarity",
             "course slurm", "course kubernetes", "course release")
SCRATCH_PREFIXES = ("course-grade-", "course-merge-", "course-inputs-")
STAGING_PREFIX = ".staging-"        # autograder.workspace.STAGING_PREFIX: inside the output folder
SQLITE_REFUSALS = {"attempt to write a readonly database": errno.EROFS,
                   "database or disk is full": errno.ENOSPC, "disk I/O error": errno.EIO,
                   "unable to open database file": errno.EACCES}


def run(prog: str, command: Callable[[list[str]], int], argv: list[str]) -> int:
    """``command(argv)``; a refusal of the machine becomes :func:`sentence` on stderr and exit 1."""
    try:
        return command(argv)
    except (OSError, sqlite3.OperationalError) as exc:
        said = sentence(prog, exc, argv)
        if said is None:
            raise
        print(said, file=sys.stderr)
        return EXIT


def _as_oserror(exc: BaseException | None) -> OSError | None:
    """The refusal in ``exc``, or None: an OSError of :data:`REFUSED`, or SQLite's word for one
    (the hand-grade ledger), also where another error was raised from it."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, OSError) and exc.errno in REFUSED:
            return exc
        if isinstance(exc, sqlite3.OperationalError):
            for words, code in SQLITE_REFUSALS.items():
                if words in str(exc):
                    return OSError(code, os.strerror(code))
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def sentence(prog: str, exc: BaseException, argv: Sequence[str] = ()) -> str | None:
    """One sentence for a refusal of the machine (None for any other error): what was refused,
    where, and what to do. ``argv``: the command's arguments, to find the folder a refusal without
    a path (a write to an open file) was about."""
    err = _as_oserror(exc)
    if err is None:
        return None
    return f"{prog}: {explain(err, prog, argv)}; the output folder was left as it was"


def explain(err: OSError, prog: str = "", argv: Sequence[str] = ()) -> str:
    """What was refused where, and what to do (the middle of :func:`sentence`), for an OSError of
    :data:`REFUSED`."""
    code = cast(int, err.errno)                     # one of REFUSED
    path = _path_of(err) or _guess(code, argv)
    where, other = _place(prog, path, argv)
    at = f" (at {path})" if path and not where.endswith(path) else ""
    said = {errno.ENOSPC: f"no space left in {where}{at}: free space on its disk",
            errno.EDQUOT: f"the disk quota is used up in {where}{at}: free space within it",
            errno.EROFS: f"{where} is on a read-only file system{at}: remount it read-write",
            errno.EACCES: f"permission denied in {where}{at}: let the grader's user read and write it",
            errno.EPERM: f"operation not permitted in {where}{at}: let the grader's user read and write it",
            errno.EIO: f"input/output error in {where}{at} (a failing disk or network file system?): "
                       "check it (dmesg), then run again"}[code]
    return said + other


def unwritable(folder: Path) -> int | None:
    """Why nothing can be written in ``folder`` (an errno of :data:`REFUSED`: a read-only file
    system, a full disk, no permission), or None: for errors that do not say (SQLite's)."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    if st.f_flag & os.ST_RDONLY:
        return errno.EROFS
    if st.f_bavail == 0:
        return errno.ENOSPC
    if not os.access(folder, os.W_OK):
        return errno.EACCES
    return None


def _path_of(err: OSError) -> str | None:
    """The path the error is about: the destination of a copy when the disk is full or read-only."""
    if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) and err.filename2:
        return os.fsdecode(err.filename2)
    name = err.filename if err.filename is not None else err.filename2
    return None if name is None or isinstance(name, int) else os.fsdecode(name)


def _candidates(argv: Sequence[str]) -> list[str]:
    """The folders a command may write: every argument that is a path (or whose folder exists), the
    default scratch folder, the temporary folder and the lock folder."""
    from .sandbox import LOCK_DIR
    found = []
    for a in argv:
        if a.startswith("-") or not a:
            continue
        p = os.path.abspath(a)
        while p != "/" and not os.path.exists(p):
            p = os.path.dirname(p)
        found.append(p)
    found += ["/var/tmp", tempfile.gettempdir(), str(LOCK_DIR)]
    return list(dict.fromkeys(found))


def _guess(code: int, argv: Sequence[str]) -> str | None:
    """For an error without a path: the folder of the arguments whose disk is full (or read-only)."""
    best: tuple[int, str] | None = None
    for p in _candidates(argv):
        try:
            st = os.statvfs(p)
        except OSError:
            continue
        if code == errno.EROFS and st.f_flag & os.ST_RDONLY:
            return p
        if code in (errno.ENOSPC, errno.EDQUOT):
            free = st.f_bavail * st.f_frsize
            if best is None or free < best[0]:
                best = (free, p)
    return best[1] if best else None


def _place(prog: str, path: str | None, argv: Sequence[str]) -> tuple[str, str]:
    """(which folder the path is, as the user knows it; the other way out, after a comma)."""
    from .sandbox import LOCK_DIR
    if path is None:
        return "a folder the command writes (the output or the scratch folder)", ""
    parts = Path(path).parts
    lock = str(LOCK_DIR / "course-grader")
    if path == lock or path.startswith(lock + os.sep) or path == str(LOCK_DIR):
        return f"the grader's lock folder {lock}", ", or set COURSE_GRADER_LOCK_DIR to another folder"
    for i, part in enumerate(parts):
        if part.startswith(STAGING_PREFIX):
            return f"the output folder {Path(*parts[:i])}", ", or give another --out"
        if part.startswith(SCRATCH_PREFIXES):
            other = ", or give another with --scratch DIR" if "--scratch" in _options(prog) else ""
            return f"the scratch folder {Path(*parts[:i])}", other
    for out in _outs(prog, argv):
        real = os.path.abspath(out)
        if path == real or path.startswith(real + os.sep) or real.startswith(path + os.sep):
            return f"the output folder {out}", (", or give another --out"
                                                if any(a.startswith("--out") for a in argv) else "")
    return path, ""


def _options(prog: str) -> set[str]:
    """The options a command takes that the advice may name."""
    return {"--scratch"} if prog in ("course grade", "python -m autograder") else set()


def _outs(prog: str, argv: Sequence[str]) -> list[str]:
    """The output folder as the user gave it: ``--out DIR``, or the first argument of the commands
    that take DIR first (``course merge OUT``, ``course manual DIR``, ...)."""
    values = []
    for i, a in enumerate(argv):
        if a == "--out" and i + 1 < len(argv):
            values.append(argv[i + 1])
        elif a.startswith("--out="):
            values.append(a.split("=", 1)[1])
    if not values and prog in OUT_FIRST and argv and not argv[0].startswith("-"):
        values.append(argv[0])
    return values
