"""Collecting submissions: notebooks, folders of them, and zips (LMS bulk downloads or students' uploads).

Each submission becomes a :class:`Submission` whose ``file`` is the name shown in ``grades.csv``:

- a notebook given on the command line: its file name (``alice.ipynb``);
- a notebook found in a folder: its path below that folder (``section 1/alice.ipynb``);
- a zip holding one notebook (a student's own upload): the zip's file name (``alice.zip``);
- a Canvas or Moodle bulk download given on the command line (every notebook or zip in it named as
  those systems name them: ``smithjohn_12345_67890_hw.ipynb``, ``smithjohn_LATE_12345_67890_hw.ipynb``,
  ``John Smith_123_assignsubmission_file_/hw.ipynb``): the notebook's path inside the zip; a zip
  inside it is that student's upload, named by its own path;
- any other zip holding several notebooks, and every zip found in a folder (an extracted bulk
  download holds the students' own zips): the zip's name, a slash, and the notebook's path inside
  it (``alice.zip/part1.ipynb``), so that an upload can never name a row like a classmate's. Only
  the instructor's download names rows and carries LMS ids (:func:`lms_id` reads no id inside a
  zip's own path), never what a student put in a zip.

Every name, from the file system or a zip, becomes a row's name in one place (:func:`display_name`):
bytes that are not UTF-8 (a Latin-1 ``ren\xe9.ipynb``) become U+FFFD, and control characters,
line and paragraph separators and bidirectional overrides become ``?``
(:data:`autograder.csvcells.CONTROL`): a name is one line of UTF-8 in every CSV and page, and
``manual.csv``'s key hashes the very name ``grades.csv`` shows.

Two rows never share a name: when two submissions would, both rows are renamed
``NAME (name clash K of N)`` and get a ``name clash`` status instead of grades.

Zips are never extracted: each notebook is streamed, one at a time and in pieces, into the
grader's private staging folder (``NNNNN.ipynb``: the student's name never becomes a path), and
a zip is refused as a whole, with a ``rejected upload`` status on its row, when its directory
holds too many entries, when the members within their own caps would unpack to too much, or when
a student's zip holds too many notebooks. A member over its own cap (a notebook over
MAX_NOTEBOOK_BYTES, a zip over MAX_UPLOAD_BYTES) or compressed suspiciously well (over RATIO_FLOOR
unpacked and over MAX_RATIO times its packed size: a zip bomb) is refused alone, on its own row:
one student's file never costs a bulk download's other students their grades. The bytes are not
parsed here: checking that a notebook is a notebook is the sandboxed runner's job.

Every entry found is a row or a named skip (:class:`Skipped`), never a silent absence. A skip is
what is not a submission by its name: Jupyter's checkpoints, macOS's metadata, a file that is not a
notebook or zip, a link to a folder. Whatever is named like a notebook or zip is a row, and what is
not a regular file becomes a row whose ``unreadable file: ...`` status says what it is (a link to
nothing, a link that loops, a link to outside the submissions, a FIFO, socket or device, a folder
named like a notebook, a folder that cannot be listed). A link is followed only to a file inside the
submissions (inside the folder given, or beside a file given); nothing is opened before ``lstat``
says it is a regular file, and then with ``O_NONBLOCK | O_NOFOLLOW``: a FIFO swapped in after the
check never blocks the batch.

Of one student's notebooks (one LMS id, or one upload: :func:`student_key`) at most
MAX_STUDENT_NOTEBOOKS are run, the first by name; every other one keeps its row, with a ``not
graded: more than 3 notebooks from one student`` status: each notebook runs to its own time limit,
and one student must not cost the class 40 of them.
"""
from __future__ import annotations

import atexit
import errno
import os
import re
import shutil
import stat
import tempfile
import unicodedata
import zipfile
import zlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .csvcells import CONTROL

MAX_NOTEBOOK_BYTES = 256 * 2**20
SKIP_PARTS = {"__MACOSX", ".ipynb_checkpoints"}
# one zip given by the instructor (typically an LMS bulk download)
MAX_ZIP_ENTRIES = 20_000
MAX_ZIP_DIRECTORY_BYTES = 16 * 2**20
MAX_BULK_BYTES = 8 * 2**30
# one student's upload (a zip that is not an LMS download, or a zip inside one)
MAX_UPLOAD_ENTRIES = 1_000
MAX_UPLOAD_NOTEBOOKS = 20
# one student (one LMS id, or one upload found without an id): at most this many notebooks are run;
# each runs to its own time limit, so 40 notebooks of one student would cost 40 time limits
MAX_STUDENT_NOTEBOOKS = 3
MAX_UPLOAD_BYTES = 512 * 2**20
# a member that unpacks to more than RATIO_FLOOR bytes may be at most MAX_RATIO times its packed size
# (below it, any ratio: a notebook's repeated output compresses 1000 times and a notebook of up to
# 64 MB costs the grader nothing; the per-member caps bound the rest)
MAX_RATIO = 200
RATIO_FLOOR = 64 * 2**20
CHUNK = 1 << 20
NAME_BYTES = 100                   # the notebook's file name in the scratch folder
STEM_BYTES = 180                   # results/<stem>.json and feedback/<stem>.md

# why an entry is skipped (a named skip: counted in the summary, listed in report.html)
SKIP_CHECKPOINTS = "Jupyter's checkpoints"
SKIP_MACOS = "macOS's metadata"
SKIP_NOT_NOTEBOOK = "not a notebook or zip (by its name)"
SKIP_LINKED_FOLDER = "a link to a folder (not followed)"
SUFFIXES = (".ipynb", ".zip")

SURROGATE = re.compile("[\ud800-\udfff]")
CANVAS = re.compile(r"^[^/_]+_(?:late_)?\d+_\d+_[^/]+$", re.IGNORECASE)
MOODLE = re.compile(r"^[^/]+_\d+_assign(?:submission|feedback)_[a-z]+_(?:/.+|[^/]+)$")


CANVAS_ID = re.compile(r"^[^/_]+_(?:late_)?(\d+)_\d+_.", re.IGNORECASE)
# The full name may hold underscores; the id is the first number followed by _assignsubmission_
# (what follows is the student's own file name, which may imitate the pattern).
MOODLE_ID = re.compile(r"^[^/]+?_(\d+)_assign(?:submission|feedback)_[a-z]+_")


def lms_id(file: str) -> tuple[str, str] | None:
    """The student's LMS identifier in a row name: ``("canvas", user id)`` for a Canvas bulk-download
    name (``smithjohn_12345_67890_hw.ipynb``, ``smithjohn_LATE_12345_67890_hw.ipynb``: 12345 is the
    Canvas user id, the gradebook's ``ID`` column), ``("moodle", participant id)`` for a Moodle one
    (``John Smith_123_assignsubmission_file_/hw.ipynb``: the grading worksheet's ``Participant 123``),
    else None. The first part of the path that is named so counts (a zip inside a bulk download
    too), but never a part inside a zip: what a student's zip holds is that student's."""
    for part in PurePosixPath(file).parts:
        m = CANVAS_ID.match(part)
        if m and CANVAS.match(part):
            return "canvas", str(int(m.group(1)))
        m = MOODLE_ID.match(part)
        if m:
            return "moodle", str(int(m.group(1)))
        if part.lower().endswith(".zip"):
            return None
    return None


def clean_name(name: str) -> str:
    """A name on one line: control characters, separators and bidi overrides become ``?``."""
    return CONTROL.sub("?", name)


def display_name(name: str) -> str:
    """The one way a name from the file system or a zip becomes a row's name (and every other text
    the grader shows or writes of it): bytes that are not UTF-8 (which Python keeps as lone
    surrogates, ``ren\\udce9.ipynb``) become U+FFFD, the name is NFC-normalised, and control
    characters become ``?`` (:func:`clean_name`). The result encodes as UTF-8, so ``grades.csv``,
    ``manual.csv``'s key and every page show and hash the same text."""
    if SURROGATE.search(name):
        try:
            name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:                     # a surrogate no file system byte gives
            name = SURROGATE.sub("\ufffd", name)
    return clean_name(unicodedata.normalize("NFC", name))


class InputError(ValueError):
    """A command-line argument that is not a submission."""


@dataclass
class Submission:
    """One submission: its row name, a safe file stem, where its bytes are staged (or why there are none)."""

    file: str
    path: Path | None
    problem: str | None = None
    stem: str = ""
    notebook_name: str = "submission.ipynb"
    source: str = ""                  # where it came from (the argument, and the member of a zip)
    upload: str | None = None         # the student's upload (a zip) it came from, if any

    @property
    def data(self) -> bytes | None:
        """The staged bytes (read on demand: never kept in memory)."""
        return self.path.read_bytes() if self.path is not None else None


@dataclass(frozen=True)
class Skipped:
    """An entry that is not a submission by its name (``name``: as a row would be named) and the
    rule that skips it (one of the ``SKIP_*`` texts)."""

    name: str
    rule: str


class _Stage:
    """Numbered files in the staging folder, and the entries skipped on the way."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.n = 0
        self.skipped: list[Skipped] = []

    def next(self, suffix: str = ".ipynb") -> Path:
        self.n += 1
        return self.folder / f"{self.n:05d}{suffix}"


def _fix_zip_name(info: zipfile.ZipInfo) -> str:
    """Zip members without the UTF-8 flag were decoded as cp437; most are really UTF-8 (Windows, macOS)."""
    name = info.filename
    if not info.flag_bits & 0x800:
        try:
            name = name.encode("cp437").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
    return display_name(name)


def _skipped(parts: tuple[str, ...]) -> bool:
    return _skip_rule(parts) is not None


def _skip_rule(parts: tuple[str, ...]) -> str | None:
    """The rule that skips a path of these parts (a checkpoint, macOS's metadata), or None."""
    for p in parts:
        if p == ".ipynb_checkpoints":
            return SKIP_CHECKPOINTS
        if p in SKIP_PARTS or p.startswith("._"):
            return SKIP_MACOS
    return None


def _skip_name(label: str, parts: tuple[str, ...]) -> str:
    """A skipped path named up to its first skipped part (``__MACOSX/`` once, not per file in it)."""
    for i, p in enumerate(parts):
        if p in SKIP_PARTS and i < len(parts) - 1:
            return "/".join((label, *parts[: i + 1])).lstrip("/") + "/"
    return "/".join((label, *parts)).lstrip("/")


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, never in the middle of a character."""
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def short_name(name: str) -> str:
    """The file name the notebook gets in its scratch folder: its own base name, at most
    NAME_BYTES bytes (a long name must not fail the sandbox), never empty nor a path."""
    base = PurePosixPath(name.replace("\\", "/")).name.replace("\0", "")
    if base in ("", ".", ".."):
        return "submission.ipynb"
    if len(base.encode("utf-8")) <= NAME_BYTES:
        return base
    suffix = ".ipynb" if base.lower().endswith(".ipynb") else ""
    return (_cut(base[: len(base) - len(suffix)], NAME_BYTES - len(suffix)).rstrip() or "submission") + suffix


def _copy(src, dest: Path, cap: int) -> str | None:
    """Stream ``src`` (a binary file object) into ``dest``; a problem when it holds more than ``cap``.
    A read that fails raises its OSError (the submission's); a write that fails, :class:`_StagingError`
    (the staging folder's disk: no row of the batch could be graded there)."""
    n = 0
    try:
        out = open(dest, "wb")
    except OSError as exc:
        raise _StagingError(exc) from exc
    try:
        while True:
            chunk = src.read(CHUNK)
            if not chunk:
                return None
            n += len(chunk)
            if n > cap:
                return f"too large (over {cap // 2**20} MB)"
            try:
                out.write(chunk)
            except OSError as exc:
                raise _StagingError(exc) from exc
    finally:
        try:
            out.close()
        except OSError as exc:
            raise _StagingError(exc) from exc


def _member_problem(info: zipfile.ZipInfo, cap: int) -> str | None:
    """Why one member is refused on its own row (over its cap, or a zip bomb), or None."""
    if info.file_size > cap:
        return f"unreadable notebook: too large ({info.file_size // 2**20} MB)"
    if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(1, info.compress_size):
        return (f"rejected file: it unpacks to {info.file_size / 2**20:.0f} MB from "
                f"{info.compress_size / 1024:.0f} KB (a zip bomb?)")
    return None


def _stage_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path,
                  cap: int = MAX_NOTEBOOK_BYTES) -> str | None:
    problem = _member_problem(info, cap)
    if problem:
        return problem
    try:
        with zf.open(info) as f:
            problem = _copy(f, dest, cap)
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, zlib.error, EOFError,
            ValueError) as exc:
        dest.unlink(missing_ok=True)
        return f"unreadable zip member: {str(exc)[:200]}"
    if problem:
        dest.unlink(missing_ok=True)
        return "unreadable notebook: " + problem
    return None


def _directory_problem(path: Path) -> str | None:
    """Refuse a zip whose directory is too big before reading it (zipfile reads it all at once)."""
    try:
        with open(path, "rb") as f:
            # the end-of-directory record (also ZIP64); zipfile's private helpers are not in its stubs
            end = zipfile._EndRecData(f)  # type: ignore[attr-defined]
    except OSError as exc:
        return f"unreadable zip: {exc.strerror}"
    if not end:
        return None                    # not a zip: ZipFile says so
    entries, size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
    if entries > MAX_ZIP_ENTRIES:
        return f"rejected upload: the zip has {entries} entries (at most {MAX_ZIP_ENTRIES})"
    if size > MAX_ZIP_DIRECTORY_BYTES:
        return f"rejected upload: the zip's directory is {size // 2**20} MB"
    return None


def _members(zf: zipfile.ZipFile, label: str = "",
             skipped: list[Skipped] | None = None) -> list[tuple[str, zipfile.ZipInfo]]:
    """The notebooks and zips in ``zf``; every other file goes into ``skipped`` (named below
    ``label``, a skipped folder once) with its rule."""
    out = []
    skips: dict[str, str] = {}
    for info in zf.infolist():
        if info.is_dir():
            continue
        name = _fix_zip_name(info)
        parts = PurePosixPath(name).parts
        rule = _skip_rule(parts)
        if rule is None and not name.lower().endswith(SUFFIXES):
            rule = SKIP_NOT_NOTEBOOK
        if rule is None:
            out.append((name, info))
        else:
            skips.setdefault(_skip_name(label, parts), rule)
    if skipped is not None:
        skipped.extend(Skipped(n, r) for n, r in sorted(skips.items()))
    return sorted(out, key=lambda t: t[0])


def is_lms_download(names: list[str]) -> bool:
    """Every notebook and zip named as Canvas or Moodle name them in a bulk download."""
    return bool(names) and all(CANVAS.match(n) or MOODLE.match(n) for n in names)


def _caps_problem(zf: zipfile.ZipFile, wanted: list[tuple[str, zipfile.ZipInfo]], bulk: bool,
                  n_notebooks: int) -> str | None:
    """Why the whole zip is refused, or None. Members over their own caps do not count here:
    each is refused on its own row (:func:`_member_problem`)."""
    entries = len(zf.infolist())
    if not bulk and entries > MAX_UPLOAD_ENTRIES:
        return f"rejected upload: the zip has {entries} entries (at most {MAX_UPLOAD_ENTRIES} in one upload)"
    if not bulk and n_notebooks > MAX_UPLOAD_NOTEBOOKS:
        return (f"rejected upload: the zip holds {n_notebooks} notebooks "
                f"(at most {MAX_UPLOAD_NOTEBOOKS} in one upload)")
    total = sum(i.file_size for n, i in wanted if _member_problem(i, _member_cap(n)) is None)
    cap = MAX_BULK_BYTES if bulk else MAX_UPLOAD_BYTES
    if total > cap:
        return (f"rejected upload: the zip would unpack to {total / 2**20:.0f} MB "
                f"(at most {cap // 2**20} MB)")
    return None


def _member_cap(name: str) -> int:
    return MAX_UPLOAD_BYTES if name.lower().endswith(".zip") else MAX_NOTEBOOK_BYTES


def _from_zip(path: Path, label: str, stage: _Stage, nested: bool = False,
              may_be_bulk: bool = True, upload: str | None = None) -> list[Submission]:
    """The submissions in one zip. ``may_be_bulk``: the instructor gave this zip on the command
    line (an LMS bulk download names its rows; any other is the instructor's collection, each
    notebook its own); a zip found in a folder or inside a zip is one student's upload
    (``nested``: inside another zip, so a zip in it is refused; ``upload``: whose it is)."""
    own = upload or (None if may_be_bulk and not nested else label)
    problem = _directory_problem(path)
    if problem:
        return [Submission(label, None, problem, source=label)]
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        return [Submission(label, None, f"unreadable zip: {str(exc)[:200]}", source=label)]
    with zf:
        try:
            members = _members(zf, label, stage.skipped)
        except (zipfile.BadZipFile, ValueError) as exc:
            return [Submission(label, None, f"unreadable zip: {str(exc)[:200]}", source=label)]
        notebooks = [(n, i) for n, i in members if n.lower().endswith(".ipynb")]
        inner_zips = [(n, i) for n, i in members if n.lower().endswith(".zip")]
        bulk = may_be_bulk and not nested and is_lms_download([n for n, _ in members])
        problem = _caps_problem(zf, members, bulk, len(notebooks))
        if problem:
            return [Submission(label, None, problem, source=label)]
        if len(notebooks) == 1 and not inner_zips and not bulk:
            name, info = notebooks[0]
            dest = stage.next()
            problem = _stage_member(zf, info, dest)
            return [Submission(label, None if problem else dest, problem, notebook_name=short_name(name),
                               source=f"{label}: {name}", upload=own)]
        if not notebooks and not inner_zips:
            return [Submission(label, None, "no notebook in the zip", source=label)]
        subs = []
        for name, info in notebooks:
            row = name if bulk else f"{label}/{name}"
            dest = stage.next()
            problem = _stage_member(zf, info, dest)
            subs.append(Submission(row, None if problem else dest, problem, notebook_name=short_name(name),
                                   source=f"{label}: {name}", upload=own))
        for name, info in inner_zips:
            row = name if bulk else f"{label}/{name}"
            if nested:
                subs.append(Submission(row, None, "rejected upload: a zip inside a zip inside a zip",
                                       source=f"{label}: {name}"))
                continue
            tmp = stage.next(".zip")
            problem = _stage_member(zf, info, tmp, cap=MAX_UPLOAD_BYTES)
            if problem:
                subs.append(Submission(row, None, problem.replace("notebook", "zip"),
                                       source=f"{label}: {name}"))
                continue
            try:
                subs.extend(_from_zip(tmp, row, stage, nested=True, upload=own or row))
            finally:
                tmp.unlink(missing_ok=True)
        return subs


def _kind(mode: int) -> str | None:
    """What a file that is not a regular one is, as a row's status says it; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder named like a notebook, not a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a file; not read"
    if stat.S_ISSOCK(mode):
        return "a socket, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a file; not read"
    return "not a regular file"


def _unreadable(label: str, what: str, source: str) -> Submission:
    return Submission(label, None, f"unreadable file: {what}", source=source)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _follow(link: Path, inside: str) -> tuple[Path | None, str]:
    """Where ``link`` leads, when that is inside the folder ``inside`` (a real path); else None and
    why it is not followed."""
    try:
        target = os.path.realpath(link, strict=True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "a link that loops (not followed)"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None, "a link to nothing (what it names does not exist)"
        return None, f"a link that cannot be followed ({exc.strerror})"
    if not _within(target, inside):
        return None, "a link to outside the submissions (not followed: give what it points to instead)"
    return Path(target), ""


def _open_regular(path: Path) -> tuple[int | None, str]:
    """A descriptor of ``path`` when it is a regular file (checked with ``lstat`` before it is
    opened, and with ``fstat`` after: a FIFO or device is never opened, nor waited on), else None
    and what it is."""
    try:
        what = _kind(os.lstat(path).st_mode)
        if what is None and os.path.islink(path):
            what = "a link (not followed)"
        if what is not None:
            return None, what
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:              # made a link after the check
            return None, "a link (not followed)"
        return None, exc.strerror or str(exc)
    what = _kind(os.fstat(fd).st_mode)
    if what is not None:                          # swapped after the check
        os.close(fd)
        return None, what
    return fd, ""


def _one(path: Path, label: str, stage: _Stage, in_folder: bool = False) -> list[Submission]:
    """The submissions in one file given or found (``label``: its row name, a :func:`display_name`;
    ``path``: never a link, a link already followed inside the submissions)."""
    source = display_name(str(path))
    fd, what = _open_regular(path)
    if fd is None:
        return [_unreadable(label, what, source)]
    if path.suffix.lower() == ".zip":
        os.close(fd)
        return _from_zip(path, label, stage, may_be_bulk=not in_folder)
    try:
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_NOTEBOOK_BYTES:
                return [Submission(label, None, f"unreadable notebook: too large ({size // 2**20} MB)",
                                   source=source)]
            dest = stage.next()
            problem = _copy(f, dest, MAX_NOTEBOOK_BYTES)
    except OSError as exc:
        return [_unreadable(label, exc.strerror or str(exc), source)]
    if problem:
        dest.unlink(missing_ok=True)
        return [Submission(label, None, "unreadable notebook: " + problem, source=source)]
    return [Submission(label, dest, None, notebook_name=short_name(label), source=source)]


class _StagingError(Exception):
    """Writing a copy into the staging folder failed (the grader's disk, not the student's file):
    :func:`collect` raises the OSError it was, for the batch to stop with a sentence."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(str(exc))
        self.exc = exc


def _named_like_a_submission(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def _from_folder(folder: Path, stage: _Stage) -> list[Submission]:
    """Every entry below ``folder`` (given on the command line): a row, or a named skip."""
    real = os.path.realpath(folder)
    found: list[tuple[Path, Path]] = []           # (its path below folder, the file to read)
    rows: list[Submission] = []
    todo = [Path(real)]
    rel: str | Path                                 # a folder's (str) or an entry's (Path)
    while todo:
        here = todo.pop()
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            rel = here.relative_to(real).as_posix()
            label = display_name(folder.name if rel == "." else rel) + "/"
            rows.append(_unreadable(label, f"a folder that cannot be listed ({exc.strerror}): the "
                                    "notebooks in it were not seen", display_name(str(here))))
            continue
        for e in entries:
            p = Path(e.path)
            rel = p.relative_to(real)
            label = display_name(rel.as_posix())
            rule = _skip_rule((e.name,))
            if rule:
                stage.skipped.append(Skipped(label + ("/" if e.is_dir(follow_symlinks=False) else ""), rule))
                continue
            named = _named_like_a_submission(e.name)
            try:
                mode = os.lstat(p).st_mode
            except OSError as exc:
                rows.append(_unreadable(label, exc.strerror or str(exc), display_name(str(p))))
                continue
            if stat.S_ISDIR(mode):
                todo.append(p)
                if named:          # a row, so that a student's folder-shaped upload is seen
                    rows.append(_unreadable(label, _kind(mode) or "", display_name(str(p))))
                continue
            if stat.S_ISLNK(mode):
                target, why = _follow(p, real)
                leads_to_folder = (target.is_dir() if target is not None
                                   else os.path.isdir(p) and not why.startswith("a link that loops"))
                if leads_to_folder and not named:
                    stage.skipped.append(Skipped(label + "/", SKIP_LINKED_FOLDER))
                elif not named:
                    stage.skipped.append(Skipped(label, SKIP_NOT_NOTEBOOK))
                elif target is None:
                    rows.append(_unreadable(label, why, display_name(str(p))))
                else:
                    found.append((p, target))
                continue
            if named:
                found.append((p, p))
            else:
                stage.skipped.append(Skipped(label, SKIP_NOT_NOTEBOOK))
    subs: list[Submission] = []
    for p, target in sorted(found):
        subs.extend(_one(target, display_name(p.relative_to(real).as_posix()), stage, in_folder=True))
    return subs + rows


def _from_argument(arg: str, stage: _Stage) -> list[Submission]:
    """The rows of one command-line argument: a folder, a notebook or zip, or something that is
    neither (a row that says what it is). A link is followed only to what lies beside it (in its
    own folder, or below): a glob over an unpacked download must not reach the grader's files."""
    path = Path(arg)
    label = display_name(path.name or arg)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        raise InputError(f"no such file or folder: {arg}") from None
    except OSError as exc:
        return [_unreadable(label, exc.strerror or str(exc), display_name(arg))]
    if stat.S_ISLNK(mode):
        target, why = _follow(path, os.path.realpath(path.parent))
        if target is None:
            return [_unreadable(label, why, display_name(arg))]
        path, mode = target, os.stat(target).st_mode
    if stat.S_ISDIR(mode):
        named = [_unreadable(label, _kind(mode) or "", display_name(arg))] \
            if _named_like_a_submission(label) else []
        return _from_folder(path, stage) + named
    return _one(path, label, stage)


def collect(args: list[str], staging: Path | None = None,
            skipped: list[Skipped] | None = None) -> list[Submission]:
    """All submissions named by ``args`` (files, folders, zips), staged into ``staging`` (a private
    folder; if None, a temporary one removed when this process exits), with unique ``file`` names
    and stems. Every entry found is a row or, when ``skipped`` is given, a :class:`Skipped` in it.
    An error writing a copy into ``staging`` (its disk full) is raised as the OSError it is."""
    if staging is None:
        staging = Path(tempfile.mkdtemp(prefix="course-inputs-"))
        atexit.register(shutil.rmtree, staging, True)
    stage = _Stage(staging)
    subs: list[Submission] = []
    try:
        for arg in args:
            subs.extend(_from_argument(arg, stage))
    except _StagingError as exc:
        raise exc.exc from None
    _make_unique(subs)
    cap_per_student(subs)
    if skipped is not None:
        skipped.extend(stage.skipped)
    return subs


def skip_counts(skipped: list[Skipped] | list[dict]) -> dict[str, int]:
    """{rule: how many entries it skipped}, in the order the rules first appear."""
    counts: dict[str, int] = {}
    for s in skipped:
        rule = s["rule"] if isinstance(s, dict) else s.rule
        counts[rule] = counts.get(rule, 0) + 1
    return counts


def entries_line(rows: int, skipped: list[Skipped] | list[dict]) -> str:
    """The summary's count of what was found: every entry is a row or a named skip."""
    counts = skip_counts(skipped)
    why = "; ".join(f"{n} {rule}" for rule, n in counts.items())
    return (f"{rows + len(skipped)} entries found: {rows} rows, {len(skipped)} skipped"
            + (f" ({why}; listed in report.html)" if why else ""))


def student_key(sub: Submission) -> str | None:
    """Whose a row is, for :data:`MAX_STUDENT_NOTEBOOKS`: its LMS id (``canvas 333``), else the
    student's upload it came from (a zip found in a folder or inside a zip), else None (a notebook
    of its own: given or found by the instructor, or a member of a zip the instructor gave)."""
    found = lms_id(sub.file)
    return " ".join(found) if found else sub.upload


def over_cap_status(n: int) -> str:
    return (f"not graded: more than {MAX_STUDENT_NOTEBOOKS} notebooks from one student ({n} in all; "
            f"the first {MAX_STUDENT_NOTEBOOKS} by name were graded, grade another one alone)")


def cap_per_student(subs: list[Submission]) -> None:
    """At most MAX_STUDENT_NOTEBOOKS runnable rows per student (:func:`student_key`), the first
    by name; the others keep their rows with :func:`over_cap_status` and are never run."""
    runnable: dict[str, list[Submission]] = defaultdict(list)
    for s in subs:
        who = student_key(s)
        if who is not None and s.path is not None:
            runnable[who].append(s)
    for group in runnable.values():
        for s in sorted(group, key=lambda s: s.file)[MAX_STUDENT_NOTEBOOKS:]:
            s.problem = over_cap_status(len(group))
            assert s.path is not None               # as runnable holds them
            s.path.unlink(missing_ok=True)
            s.path = None


def safe_stem(file: str) -> str:
    """A file-name-safe stem for results/ and feedback/: folders joined by '__', odd characters
    replaced, at most STEM_BYTES bytes."""
    stem = file[:-6] if file.lower().endswith(".ipynb") else file
    stem = stem.replace("/", "__").replace("\\", "__")
    stem = re.sub(r"[\x00-\x1f\x7f:*?\"<>|]", "_", stem).strip(" .")
    return _cut(stem, STEM_BYTES).strip(" .") or "submission"


def clash_label(name: str, k: int, n: int) -> str:
    return f"{name} (name clash {k} of {n})"


def _make_unique(subs: list[Submission]) -> None:
    """Rows with the same name are all renamed and get a status instead of grades: which of them
    is the student's cannot be known (an upload may name its notebooks like a classmate's)."""
    for _ in range(5):
        groups: dict[str, list[Submission]] = defaultdict(list)
        for s in subs:
            groups[s.file].append(s)
        clashes = {name: group for name, group in groups.items() if len(group) > 1}
        if not clashes:
            break
        for name, group in clashes.items():
            for k, s in enumerate(group, 1):
                s.file = clash_label(name, k, len(group))
                s.problem = (f"name clash: {len(group)} submissions are named {name!r}; none of them "
                             "was graded (grade them apart)")
                if s.path is not None:
                    s.path.unlink(missing_ok=True)
                    s.path = None
    else:  # pragma: no cover - names built to clash with clash labels, five rounds deep
        for i, s in enumerate(subs):
            s.file = f"{s.file} #{i}"
    stems: set[str] = set()
    for s in subs:
        stem = safe_stem(s.file)
        base, k = stem, 2
        while stem.lower() in stems:
            stem, k = f"{base}-{k}", k + 1
        stems.add(stem.lower())
        s.stem = stem
