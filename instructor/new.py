"""`course new NN_name "Title"`: a new notebook, started from the template and listed in the course.

It writes the three things a notebook is made of, from instructor/templates/new_notebook/:

    solutions/NN_name.ipynb                 its master (a lesson with one checked and one hand-graded
                                            question, to replace with your own)
    autograder/assignments/NN_name/         its grading material: rules.toml (what answers may not use),
                                            degenerate.py (answers that do no work and the points each
                                            may keep), mutants/ (known mistakes, each a file)
    course.toml                             the name, in its place in [course] notebooks

and nothing else; `course build NN_name` then makes the student notebook, its tests, the Gradescope
zip and the nbgrader copy. Either all of it is written or none (a name already taken, a missing
template or a failed write leaves the course as it was).
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

from . import publish, registry

ROOT = registry.ROOT
TEMPLATE = Path(__file__).resolve().parent / "templates" / "new_notebook"


class NewError(ValueError):
    """A notebook that cannot be added as asked."""


def _filled(text: str, name: str, title: str) -> str:
    return (text.replace("NN_name", name).replace("NN · TITLE", f"{name[:2]} · {title}")
            .replace('"id": "NN-', f'"id": "{name[:2]}-'))


def listed(config_text: str, name: str) -> str:
    """course.toml's text with ``name`` added to ``[course] notebooks`` in number order (comments and
    every other line kept as they are)."""
    block = re.search(r"(?ms)^notebooks\s*=\s*\[(.*?)^\]", config_text)
    if block is None:
        raise NewError("course.toml has no multi-line `notebooks = [` ... `]` list under [course] to add to")
    lines = block.group(1).splitlines(keepends=True)
    entries = [(i, m.group(1)) for i, line in enumerate(lines) if (m := re.match(r'\s*"([^"]+)"', line))]
    after = [i for i, n in entries if n[:2] < name[:2]]
    at = after[-1] + 1 if after else (entries[0][0] if entries else 0)
    lines.insert(at, f'    "{name}",\n')
    return config_text[:block.start(1)] + "".join(lines) + config_text[block.end(1):]


def new(name: str, title: str, root: Path = ROOT) -> list[Path]:
    """Add notebook ``name`` to the course in ``root``; returns the paths written."""
    config = root / "course.toml"
    names = registry.notebooks(config)
    if not registry.NAME.fullmatch(name):
        raise NewError(f"{name!r} is not named NN_name (two digits, an underscore, then lower-case words "
                       "joined by underscores, e.g. 10_sampling)")
    taken = [n for n in names if n[:2] == name[:2]]
    if taken:
        raise NewError(f"number {name[:2]} is taken by {taken[0]}: choose another")
    master = root / "solutions" / f"{name}.ipynb"
    material = root / "autograder" / "assignments" / name
    for path in (master, material):
        if path.exists():
            raise NewError(f"{path} already exists: nothing written")
    if not title.strip():
        raise NewError("the title is empty: give the notebook a title, e.g. \"Sampling\"")
    new_config = listed(config.read_text(), name)
    with tempfile.TemporaryDirectory(dir=root) as staging:     # on the same disk: renames, not copies
        staged = Path(staging)
        (staged / "master.ipynb").write_text(_filled((TEMPLATE / "master.ipynb").read_text(), name, title))
        shutil.copytree(TEMPLATE, staged / "material", ignore=shutil.ignore_patterns("master.ipynb"))
        for path in (staged / "material").rglob("*"):
            if path.is_file():
                path.write_text(_filled(path.read_text(), name, title))
        (staged / "course.toml").write_text(new_config)
        if registry.notebooks(staged / "course.toml") != sorted(names + [name]):
            raise NewError("adding the name to course.toml would not keep the list in order")
        master.parent.mkdir(parents=True, exist_ok=True)
        material.parent.mkdir(parents=True, exist_ok=True)
        (staged / "material").rename(material)
        try:
            (staged / "master.ipynb").rename(master)
            (staged / "course.toml").replace(config)       # last: until here the course does not list it
        except OSError:
            shutil.rmtree(material, ignore_errors=True)
            master.unlink(missing_ok=True)
            raise
    return [master, material, config]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course new", description=__doc__.split("\n")[0])
    parser.add_argument("name", help="NN_name, e.g. 10_sampling (the number gives its place in the course)")
    parser.add_argument("title", help='the title its students see, e.g. "Sampling"')
    args = parser.parse_args(argv)
    try:
        written = new(args.name, args.title)
    except (NewError, publish.ConfigError) as exc:
        print(f"course new: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    print(f"next: write the lesson in solutions/{args.name}.ipynb, then `course build {args.name}` "
          "(CONTRIBUTING.md, \"Adding a notebook\")")
    return 0
