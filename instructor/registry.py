"""The course's notebooks, in course order: course.toml's ``[course] notebooks``, the one list.

Every command that walks the course asks this module: the build (which masters to turn into
notebooks and tests), the release (which notebooks a week ships), ``course solutions``, ``course
grade`` (which names ``--assignment`` takes), ``course nbgrader``, the Gradescope zips and set-up
sheets, and the benchmarks. A name is ``NN_name``: its master is ``solutions/NN_name.ipynb`` and its
grading material lives in ``autograder/assignments/NN_name/``.
"""
from __future__ import annotations

import re
from pathlib import Path

from . import publish

ROOT = publish.ROOT
SOLUTIONS = ROOT / "solutions"
NAME = re.compile(r"(\d\d)_[a-z0-9]+(?:_[a-z0-9]+)*")


def notebooks(path: Path | None = None) -> list[str]:
    """The names of course.toml's ``[course] notebooks`` (default file: the repository's), checked:
    each an ``NN_name``, none twice, their numbers rising."""
    path = publish.CONFIG if path is None else path
    section = publish.tables(path).get("course")
    if not isinstance(section, dict) or "notebooks" not in section:
        raise publish.ConfigError(f"{path} has no [course] notebooks: the list of the course's notebooks, "
                                  "in course order")
    names = section["notebooks"]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise publish.ConfigError(f"{path}: [course] notebooks must be a list of names such as "
                                  f'"01_no_talking", not {names!r}')
    unknown = set(section) - {"notebooks"}
    if unknown:
        raise publish.ConfigError(f"{path}: unknown setting(s) {sorted(unknown)} in [course]")
    for name in names:
        if not NAME.fullmatch(name):
            raise publish.ConfigError(f"{path}: notebook {name!r} is not named NN_name (two digits, an "
                                      "underscore, then lower-case words joined by underscores)")
    numbers = [int(n[:2]) for n in names]
    for before, after, name in zip(numbers, numbers[1:], names[1:], strict=False):
        if after <= before:
            raise publish.ConfigError(f"{path}: notebook {name!r} comes after one numbered {before:02d}: "
                                      "list the notebooks once each, their numbers rising")
    return list(names)


def index(name: str, path: Path | None = None) -> int:
    """Where ``name`` stands in the course (0 for the first notebook); ValueError for a stranger."""
    names = notebooks(path)
    if name not in names:
        raise ValueError(f"{name!r} is not one of the course's notebooks ({', '.join(names)})")
    return names.index(name)


def upto(name: str, path: Path | None = None) -> list[str]:
    """The notebooks from the first up to and including ``name``."""
    return notebooks(path)[:index(name, path) + 1]


def strays(folder: Path = SOLUTIONS, path: Path | None = None) -> list[str]:
    """Masters in ``folder`` that course.toml does not list (a course commands would skip without a
    word), and listed notebooks without a master: one sentence each."""
    listed = notebooks(path)
    found = sorted(p.stem for p in folder.glob("[0-9][0-9]_*.ipynb"))
    return ([f"{folder / (n + '.ipynb')} is not in course.toml's [course] notebooks: add it there"
             for n in found if n not in listed]
            + [f"course.toml lists {n}, but {folder / (n + '.ipynb')} is missing"
               for n in listed if n not in found])
