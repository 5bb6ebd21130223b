"""Collecting submissions: notebooks, folders of them, and zips (LMS bulk downloads or one notebook).

Each submission becomes a :class:`Submission` whose ``file`` is the name shown in ``grades.csv``:

- a notebook given on the command line: its file name (``alice.ipynb``);
- a notebook found in a folder: its path below that folder (``section 1/alice.ipynb``);
- a zip holding one notebook (a student's own upload): the zip's file name (``alice.zip``);
- a zip holding several notebooks (Canvas / Moodle bulk download, named after the students):
  the notebook's path inside the zip (``smithjohn_12345_67890_hw.ipynb``,
  ``John Smith_123_assignsubmission_file_/hw.ipynb``); a zip inside such a zip counts as that
  student's upload and keeps its own path.

Zips are never extracted to disk: members are read into memory one at a time, with size caps,
so a zip cannot write outside the grader's folders or fill the disk. The bytes are not parsed
here: checking that a notebook is a notebook is the sandboxed runner's job.
"""
from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_NOTEBOOK_BYTES = 256 * 2**20
SKIP_PARTS = {"__MACOSX", ".ipynb_checkpoints"}


class InputError(ValueError):
    """A command-line argument that is not a submission."""


@dataclass
class Submission:
    """One submission: its row name, a safe file stem, and its bytes (or why there are none)."""

    file: str
    data: bytes | None
    problem: str | None = None
    stem: str = ""
    notebook_name: str = "submission.ipynb"


def _fix_zip_name(info: zipfile.ZipInfo) -> str:
    """Zip members without the UTF-8 flag were decoded as cp437; most are really UTF-8 (Windows, macOS)."""
    name = info.filename
    if not info.flag_bits & 0x800:
        try:
            name = name.encode("cp437").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
    return unicodedata.normalize("NFC", name)


def _skipped(parts: tuple[str, ...]) -> bool:
    return any(p in SKIP_PARTS or p.startswith("._") for p in parts)


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[bytes | None, str | None]:
    if info.file_size > MAX_NOTEBOOK_BYTES:
        return None, f"unreadable notebook: too large ({info.file_size // 2**20} MB)"
    try:
        with zf.open(info) as f:
            data = f.read(MAX_NOTEBOOK_BYTES + 1)
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as exc:
        return None, f"unreadable zip member: {exc}"
    if len(data) > MAX_NOTEBOOK_BYTES:
        return None, "unreadable notebook: too large"
    return data, None


def _zip_members(zf: zipfile.ZipFile) -> list[tuple[str, zipfile.ZipInfo]]:
    out = []
    for info in zf.infolist():
        if info.is_dir():
            continue
        name = _fix_zip_name(info)
        parts = PurePosixPath(name).parts
        if _skipped(parts):
            continue
        if name.lower().endswith((".ipynb", ".zip")):
            out.append((name, info))
    return sorted(out, key=lambda t: t[0])


def _from_zip(data: bytes, label: str, depth: int = 0) -> list[Submission]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        members = _zip_members(zf)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        return [Submission(label, None, f"unreadable zip: {exc}")]
    notebooks = [(n, i) for n, i in members if n.lower().endswith(".ipynb")]
    inner_zips = [(n, i) for n, i in members if n.lower().endswith(".zip")]
    if len(notebooks) == 1 and not inner_zips:
        name, info = notebooks[0]
        content, problem = _read_member(zf, info)
        return [Submission(label, content, problem, notebook_name=PurePosixPath(name).name)]
    if not notebooks and not inner_zips:
        return [Submission(label, None, "no notebook in the zip")]
    subs = []
    for name, info in notebooks:
        content, problem = _read_member(zf, info)
        subs.append(Submission(name, content, problem, notebook_name=PurePosixPath(name).name))
    for name, info in inner_zips:
        content, problem = _read_member(zf, info)
        if content is None or depth >= 1:
            subs.append(Submission(name, None, problem or "zip inside a zip inside a zip"))
            continue
        inner = _from_zip(content, name, depth + 1)
        if len(inner) == 1:
            subs.extend(inner)
        else:  # a student's zip holding several notebooks: keep them apart, under the zip's name
            for s in inner:
                s.file = f"{name}/{s.file}"
            subs.extend(inner)
    return subs


def _read_file(path: Path) -> tuple[bytes | None, str | None]:
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            return None, f"unreadable notebook: too large ({size // 2**20} MB)"
        return path.read_bytes(), None
    except OSError as exc:
        return None, f"unreadable file: {exc.strerror}"


def _one(path: Path, label: str) -> list[Submission]:
    if path.suffix.lower() == ".zip":
        data, problem = _read_file(path)
        if data is None:
            return [Submission(label, None, problem)]
        return _from_zip(data, label)
    data, problem = _read_file(path)
    return [Submission(label, data, problem, notebook_name=path.name)]


def collect(args: list[str]) -> list[Submission]:
    """All submissions named by ``args`` (files, folders, zips), with unique ``file`` names and stems."""
    subs: list[Submission] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*")
                           if p.is_file() and p.suffix.lower() in (".ipynb", ".zip")
                           and not _skipped(p.relative_to(path).parts))
            for p in found:
                subs.extend(_one(p, unicodedata.normalize("NFC", p.relative_to(path).as_posix())))
        elif path.is_file():
            subs.extend(_one(path, unicodedata.normalize("NFC", path.name)))
        else:
            raise InputError(f"no such file or folder: {arg}")
    _make_unique(subs)
    return subs


def safe_stem(file: str) -> str:
    """A file-name-safe stem for results/ and feedback/: folders joined by '__', odd characters replaced."""
    stem = file[:-6] if file.lower().endswith(".ipynb") else file
    stem = stem.replace("/", "__").replace("\\", "__")
    stem = re.sub(r"[\x00-\x1f\x7f:*?\"<>|]", "_", stem).strip(" .")
    return stem[:150] or "submission"


def _make_unique(subs: list[Submission]) -> None:
    seen: dict[str, int] = {}
    for s in subs:
        if s.file in seen:
            seen[s.file] += 1
            s.file = f"{s.file} ({seen[s.file]})"
        else:
            seen[s.file] = 1
    stems: set[str] = set()
    for s in subs:
        stem = safe_stem(s.file)
        base, k = stem, 2
        while stem.lower() in stems:
            stem, k = f"{base}-{k}", k + 1
        stems.add(stem.lower())
        s.stem = stem
