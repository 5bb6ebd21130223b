"""An output folder's gradings, and the one pointer that says which is OUT's.

A grading (``course grade``, ``course merge``) and every later change to its files (``course
manual``, ``course mark``'s export) is written whole into a folder of its own,
``OUT/.gradings/<version>/``, and made OUT's by one atomic rename of a symbolic link:

    OUT/.current      -> .gradings/<version>      the pointer: its rename is the only commit
    OUT/.previous     -> .gradings/<older>        kept for a reader still reading it
    OUT/grades.csv    -> .current/grades.csv      each of OUT's documented names, a link
    OUT/results       -> .current/results         through the pointer (made once, never
    ...                                           changed by a swap)
    OUT/hand_grades.sqlite, shards/, cache/, manual-N.csv    real files, never versioned

So a process killed at any moment leaves the pointer on the old grading or on the new one, whole,
hand grades included (they are given back into the new grading before its pointer moves), and a
plain read of ``OUT/grades.csv`` then ``OUT/results/`` sees one grading between two swaps.
Readers in the code resolve the pointer once, with :func:`resolve` (or :func:`locate` for one
path), and read the grading's files from the folder it returns, whatever swap happens meanwhile.
A folder that holds real files at those names (written without pointers) is made a version of its own by
hard links the first time a grading is published into it (:func:`_adopt`), a name at a time with
an atomic exchange, so that it too reads as the old grading throughout. A run that dies leaves a
staging folder, a version no pointer names, or a temporary link; the next run removes them.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import itertools
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

CURRENT = ".current"            # the pointer: OUT's grading
PREVIOUS = ".previous"          # the grading before it, kept until the next swap
VERSIONS = ".gradings"          # every grading, each in a folder of its own
STAGING_PREFIX = ".staging-"    # OUT/.staging-PID[-edit]: a grading being written
LINK_PREFIX = ".link-"          # OUT/.link-PID-NAME: a link made beside its place, then renamed
PART_PREFIX = ".part-"          # OUT/.part-PID-NAME: a file written before OUT's grading is copied
MADE_OUT = ".made-out"          # in a staging folder: its run created OUT itself
KEPT = ("shards", "cache")      # never part of a grading (nor the ledger, hand_grades*)

_pins: dict[str, Path] = {}     # {OUT, real path: the folder its readers in this process see}
_seq = itertools.count()



# What a grading holds at OUT's documented names (written by autograder/report.py and the tools that
# add to a grading), and the hand-grading files beside them.
OUTPUT_FILES = ("grades.csv", "timings.json", "report.html", "questions.json", "canvas_import.csv",
                "moodle_import.csv", "similarity.csv", "lms.json", "canvas_feedback.zip", "rubric_stats.csv",
                "mistakes.csv")
OUTPUT_DIRS = ("results", "feedback", "figures", "manual")
PREFILLED = ".manual.csv.prefilled"    # instructor.manual.prefill: the SHA-256 of what it wrote

def _kept(name: str) -> bool:
    return name in KEPT or name.startswith(("hand_grades", STAGING_PREFIX, LINK_PREFIX, PART_PREFIX)) \
        or name in (CURRENT, PREVIOUS, VERSIONS)


# ---------------------------------------------------------------- readers

def resolve(out: Path) -> Path:
    """The folder that holds OUT's grading, for a reader to read every file of it from: the version
    the pointer names now (read once: a swap after it changes nothing for this reader), the staging
    folder while this process gives hand grades back into it (:func:`staged`), else ``out`` itself
    (a folder of the older layout, a shard's folder, a staging folder)."""
    out = Path(out)
    if _pins:
        pinned = _pins.get(os.path.realpath(out))
        if pinned is not None:
            return pinned
    try:
        target = os.readlink(out / CURRENT)
    except OSError:
        return out
    return out / target


def locate(path: Path) -> Path:
    """Where to read ``path``, a file named inside an output folder (``OUT/feedback/x.md``): the
    same name in :func:`resolve` of the nearest folder above it that has a pointer."""
    path = Path(path)
    for depth, parent in enumerate(path.parents):
        rel = path.relative_to(parent)
        if rel.parts[0] == VERSIONS or rel.parts[0].startswith(STAGING_PREFIX):
            return path                 # a grading's own folder, named already
        if (_pins and os.path.realpath(parent) in _pins) or os.path.islink(parent / CURRENT):
            return resolve(parent) / rel
        if depth >= 3:                  # the files of a grading are at most two folders deep
            break
    return path


@contextlib.contextmanager
def staged(out: Path, staging: Path) -> Iterator[None]:
    """While a grading is not yet published: this process reads and writes OUT's grading in
    ``staging`` (the hand grades given back, the LMS files written, before the pointer moves)."""
    key = os.path.realpath(out)
    _pins[key] = staging
    try:
        yield
    finally:
        _pins.pop(key, None)


# ---------------------------------------------------------------- writers

def begin(out: Path, suffix: str = "") -> Path:
    """A fresh staging folder inside ``out`` (``out/.staging-PID``: hidden from student code as
    ``out`` is, on the same file system) where a grading or a merge writes everything; ``out``
    keeps its grading until :func:`publish`. What runs that died left is removed."""
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(STAGING_PREFIX + "*"):
        if not _alive_owner(old.name.removeprefix(STAGING_PREFIX)):
            shutil.rmtree(old, ignore_errors=True)
    for prefix in (LINK_PREFIX, PART_PREFIX):
        for old in out.glob(prefix + "*"):
            if not _alive_owner(old.name.removeprefix(prefix)):
                _remove(old)
    staging = out / f"{STAGING_PREFIX}{os.getpid()}{suffix}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    if made:                        # a run that cannot finish leaves no folder it made (discard)
        (staging / MADE_OUT).touch()
    return staging


def publish(staging: Path, out: Path) -> None:
    """``staging`` becomes OUT's grading: renamed into ``.gradings/``, a link made for each name
    it has that OUT lacks (until the pointer moves it leads where it led: nowhere, or the old
    grading), then the pointer renamed onto it: the one step that changes what OUT reads. Links
    to names the new grading lacks go after it, and every version but the two newest."""
    with _locked(out):
        _publish(staging, out)


def discard(staging: Path) -> None:
    """A run that did not finish: its staging folder goes, ``out`` is as it was (absent, when the
    run made it and nothing else has been put there since)."""
    made = (staging / MADE_OUT).exists()
    shutil.rmtree(staging, ignore_errors=True)
    if made:
        try:
            staging.parent.rmdir()
        except OSError:
            pass


@contextlib.contextmanager
def editing(out: Path) -> Iterator[Path]:
    """The folder to write OUT's changed files into (by the same names below it), and at the end
    made OUT's: the staging folder while a grading is being published (:func:`staged`); else a
    copy of OUT's grading (hard links: each changed file must be replaced, by a rename, never
    written in place) published when the block ends without an error; for a folder of the older
    layout, ``out`` itself."""
    pinned = _pins.get(os.path.realpath(out)) if _pins else None
    if pinned is not None:
        yield pinned
        return
    if not os.path.islink(Path(out) / CURRENT):
        yield Path(out)
        return
    with _locked(out):
        staging = begin(Path(out), "-edit")
        try:
            shutil.copytree(resolve(out), staging, symlinks=True, copy_function=_link_or_copy,
                            dirs_exist_ok=True)
            yield staging
            _publish(staging, Path(out))
        finally:
            discard(staging)


def part(out: Path, name: str) -> Path:
    """Where to write, before :func:`editing` begins, a file that will be renamed into OUT's
    grading: never inside the grading itself (a published grading is never written, and the copy
    :func:`editing` makes of it would carry the file along), so ``OUT/.part-PID-NAME``, removed by
    the next run if this one dies; in the staging folder while this process writes OUT's grading
    there (:func:`staged`: removed with it), in a folder of the older layout, ``out`` itself."""
    out = Path(out)
    if os.path.islink(out / CURRENT) and not (_pins and os.path.realpath(out) in _pins):
        return out / f"{PART_PREFIX}{os.getpid()}-{name}"
    return resolve(out) / f".{name}.{os.getpid()}.part"


def write_files(out: Path, files: dict[Path, bytes | None]) -> None:
    """Files of OUT's grading, named as OUT's (``out / "lms.json"``), written (None: removed)
    together (:func:`editing`): each written beside its place and renamed."""
    with editing(out) as into:
        for path, data in files.items():
            dest = into / Path(path).relative_to(out)
            if data is None:
                dest.unlink(missing_ok=True)
                continue
            tmp = dest.with_name(f".{dest.name}.{os.getpid()}.part")
            try:
                tmp.write_bytes(data)
                os.replace(tmp, dest)
            finally:
                tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------- the swap

def _publish(staging: Path, out: Path) -> None:
    versions = out / VERSIONS
    versions.mkdir(exist_ok=True)
    _unfollow(out)
    if not os.path.islink(out / CURRENT):
        _adopt(out)
    try:
        old = os.readlink(out / CURRENT)
    except FileNotFoundError:
        old = None
    for entry in list(staging.iterdir()):      # not outputs: never shown as OUT's
        if entry.name == MADE_OUT or _kept(entry.name):
            _remove(entry)
    name = _version_name()
    os.rename(staging, versions / name)
    names = sorted(e.name for e in os.scandir(versions / name) if not e.name.startswith("."))
    for n in names:
        if not os.path.islink(out / n):        # absent, or a stray real file: a link in its place
            _link(out, n)
    if old is not None:
        _symlink(out, PREVIOUS, old)
    _symlink(out, CURRENT, f"{VERSIONS}/{name}")     # the commit
    _fsync(out)
    for e in os.scandir(out):                  # names only the old grading had: dangling now
        if e.is_symlink() and e.name not in names and not e.name.startswith(".") \
                and os.readlink(e.path).startswith(CURRENT + "/"):
            os.unlink(e.path)
    keep = {os.path.basename(os.readlink(out / p)) for p in (CURRENT, PREVIOUS) if os.path.islink(out / p)}
    for v in versions.iterdir():
        if v.name not in keep:
            _remove(v)


def _unfollow(out: Path) -> None:
    """OUT copied by a copier that followed its links (Python's ``shutil.copytree``, ``cp -rL``):
    the pointers are real folders. The current one becomes a version again and the pointer is set on
    it; a real ``.previous`` is only a copy, and goes."""
    previous = out / PREVIOUS
    if previous.exists() and not previous.is_symlink():
        _remove(previous)
    current = out / CURRENT
    if current.is_dir() and not current.is_symlink():
        name = _version_name()
        os.rename(current, out / VERSIONS / name)
        _symlink(out, CURRENT, f"{VERSIONS}/{name}")


def _adopt(out: Path) -> None:
    """A folder of the older layout, its outputs real files at their names: made a version by hard
    links, the pointer set on it, then each name replaced by its link (a file by a rename, a folder
    by an atomic exchange where the kernel has one): each step leaves OUT reading the same bytes."""
    legacy = [n for n in (*OUTPUT_FILES, *OUTPUT_DIRS, "manual.csv", PREFILLED)
              if os.path.lexists(out / n) and not os.path.islink(out / n)]
    if not legacy:
        return
    name = _version_name()
    version = out / VERSIONS / name
    version.mkdir()
    for n in legacy:
        if (out / n).is_dir():
            shutil.copytree(out / n, version / n, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(out / n, version / n)
    _symlink(out, CURRENT, f"{VERSIONS}/{name}")
    for n in legacy:
        if n.startswith("."):                  # read through the pointer only: no link
            (out / n).unlink()
        else:
            _link(out, n)


def _link(out: Path, name: str) -> None:
    """``out/name`` made the link ``.current/name`` in one step (a folder there: exchanged with it,
    atomically where renameat2 can; else moved aside first)."""
    tmp = out / f"{LINK_PREFIX}{os.getpid()}-{name}"
    _remove(tmp)
    os.symlink(f"{CURRENT}/{name}", tmp)
    path = out / name
    if path.is_dir() and not path.is_symlink():
        if not _exchange(tmp, path):
            os.rename(path, out / f"{LINK_PREFIX}{os.getpid()}-{name}.old")
            os.rename(tmp, path)
            tmp = out / f"{LINK_PREFIX}{os.getpid()}-{name}.old"
        shutil.rmtree(tmp)
    else:
        os.replace(tmp, path)


def _symlink(out: Path, name: str, target: str) -> None:
    tmp = out / f"{LINK_PREFIX}{os.getpid()}-{name}"
    _remove(tmp)
    os.symlink(target, tmp)
    os.replace(tmp, out / name)


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step (Linux's renameat2 RENAME_EXCHANGE); False where the kernel,
    the C library or the file system has no such call."""
    if not sys.platform.startswith("linux"):
        return False
    fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if fn is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _version_name() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(_seq)}"


def _link_or_copy(src: str | Path, dst: str | Path) -> None:
    try:
        os.link(src, dst)
    except OSError:                            # a file system without hard links
        shutil.copy2(src, dst)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _fsync(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """One publisher of OUT at a time (an export from ``course mark`` while a re-grade finishes):
    an exclusive lock on the folder itself, so none is left behind."""
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _alive_owner(rest: str) -> bool:
    """Whether the process named at the start of a staging folder's or link's name still runs."""
    pid = rest.split("-", 1)[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
