"""What week NN ships: the student package as ``course release --upto NN_name`` ships it.

One answer, used wherever a student's code runs or the course is handed out: the release and its
bundle (:mod:`instructor.release`), the course copy in the Gradescope zip's engine and in the nbgrader
course, and the package a submission's process sees when it is graded (:mod:`autograder.workspace`).
The course's own answers of later weeks are not in it: ``course/tinydenoiser.py`` (TinyDenoiser, whose
``DenoiserBlock`` is 06's ``Block``) ships from 08 on.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

COURSE = Path(__file__).resolve().parent.parent / "course"
# Of course/, never shipped: `python -m course`, the instructor's command (it imports instructor/).
NOT_SHIPPED = ("__main__.py",)
# Modules of course/ that hold answers: shipped only with (and after) the notebook that reads their
# code. TinyDenoiser's DenoiserBlock is 06's Block, TinyDenoiser 07's MyTransformer without the
# positions, and both pass on 08's `causal`; 07 only plots its curve (tinydenoiser_curve.py).
SHIPS_WITH = {"tinydenoiser.py": "08_causal"}


def _number(name: str) -> int | None:
    found = re.match(r"(\d+)_", name)
    return int(found.group(1)) if found else None


def _released(notebook: str, upto: str | None) -> bool:
    """Whether a release up to ``upto`` (None: every notebook) holds ``notebook``."""
    if upto is None or upto == notebook:
        return True
    a, b = _number(notebook), _number(upto)
    return a is not None and b is not None and a <= b


def package_files(upto: str | None = None, package: Path = COURSE) -> list[Path]:
    """The files of the student package (``package``, default this repository's course/) that a
    release of the notebooks up to ``upto`` (an NN_name; None: every notebook) ships: course/
    without NOT_SHIPPED, and a module of SHIPS_WITH only once its notebook is released."""
    files = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if "__pycache__" in path.parts or rel in NOT_SHIPPED:
            continue
        if rel in SHIPS_WITH and not _released(SHIPS_WITH[rel], upto):
            continue
        files.append(path)
    return files


def module_names(upto: str | None = None, package: Path = COURSE) -> set[str]:
    """The dotted names of the modules week ``upto`` ships (``course``, ``course.rules``, ...)."""
    names = set()
    for path in package_files(upto, package):
        parts = ("course", *path.relative_to(package).with_suffix("").parts)
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def write_package(upto: str | None, folder: Path, package: Path = COURSE) -> Path:
    """Copy what week ``upto`` ships into ``folder``/course (read-only for everyone but the owner);
    returns ``folder``, the path to put on a submission's ``sys.path``."""
    target = folder / "course"
    for path in package_files(upto, package):
        dest = target / path.relative_to(package)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.parent.chmod(0o755)
        shutil.copyfile(path, dest)
        dest.chmod(0o644)
    folder.chmod(0o755)
    return folder
