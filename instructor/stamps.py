"""What one notebook's build depends on, and whether its built files are still what it makes.

`course build` rebuilds a notebook only when it is stale: when one of its inputs changed since its
last build here, or one of its built files is not what that build wrote. Its inputs are

- its master, as the build prepared it (so also course.toml's badge and setup cell, and the
  earlier masters' `reference` cells, which its given-earlier cell holds),
- the build's own code (instructor/) and the versions of otter, nbformat and nbgrader,
- the course package as its release ships it (nbgrader/source/NN_name/course/);

and, for its Gradescope zip only (autograder/build/, not committed), the engine and everything
else the zip carries, so that a change to the grader re-packs the zips without running otter.
A stamp per notebook, in autograder/build/stamps/ (not committed: a fresh clone builds all),
records the digests of each.
"""
from __future__ import annotations

import hashlib
import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from autograder import shipped

from .masters import ROOT, SOLUTIONS

BUILD = ROOT / "autograder" / "build"
STAMPS = BUILD / "stamps"
TOOLS = ("otter-grader", "nbformat", "nbgrader")


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        h.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"(missing)") + b"\0")
    return h.hexdigest()


def _versions() -> str:
    found = []
    for tool in TOOLS:
        try:
            found.append(f"{tool}=={version(tool)}")
        except PackageNotFoundError:
            found.append(f"{tool} missing")
    return hashlib.sha256("\n".join(found).encode()).hexdigest()


def inputs(name: str) -> dict[str, str]:
    """The digests of what the built files of `name` are made from, by kind."""
    code = sorted(p for p in (ROOT / "instructor").rglob("*") if p.suffix in (".py", ".json")
                  and "__pycache__" not in p.parts)
    return {"master": _digest([SOLUTIONS / f"{name}.ipynb"]),
            "build code": _digest(code),
            "tools": _versions(),
            "course package": _digest(sorted(shipped.package_files(name)))}


def outputs(name: str) -> list[Path]:
    """The files the build of `name` writes (committed, and the filled-in notebook it leaves in
    autograder/build/ for the tests and benchmarks)."""
    assignment = ROOT / "autograder" / "assignments" / name
    found = [ROOT / "notebooks" / f"{name}.ipynb", assignment / "assignment.json",
             BUILD / f"{name}-solution.ipynb", BUILD / f"{name}-otter.zip"]
    found += sorted((ROOT / "notebooks" / "tests" / name).glob("*.py"))
    found += sorted((assignment / "tests").glob("*.py"))
    source = ROOT / "nbgrader" / "source" / name
    found += sorted(p for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return found


def _read(name: str) -> dict:
    try:
        stamp = json.loads((STAMPS / f"{name}.json").read_text())
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def stale(name: str) -> str | None:
    """Why `name` must be built again, or None when its built files are what its inputs make."""
    stamp = _read(name)
    if not stamp:
        return "not built here yet"
    changed = [kind for kind, digest in inputs(name).items() if stamp.get("inputs", {}).get(kind) != digest]
    if changed:
        return f"its {', '.join(changed)} changed"
    if stamp.get("outputs") != _digest(outputs(name)):
        return "a built file is not what its last build wrote"
    return None


def zip_stale(name: str, packed: list[Path]) -> bool:
    """Whether the Gradescope zip of `name` must be packed again (`packed`: what it carries)."""
    zipped = BUILD / f"{name}-autograder.zip"
    return not zipped.is_file() or _read(name).get("zip") != _digest(packed)


def write(name: str, packed: list[Path]) -> None:
    """Record what the build of `name` was made from and what it wrote."""
    STAMPS.mkdir(parents=True, exist_ok=True)
    stamp = {"inputs": inputs(name), "outputs": _digest(outputs(name)), "zip": _digest(packed)}
    (STAMPS / f"{name}.json").write_text(json.dumps(stamp, indent=1) + "\n")
