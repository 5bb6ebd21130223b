"""`course build`: the master notebooks in solutions/ -> student notebooks, public tests, autograder.

For every master, in order:
1. Rewrite the cells the build owns (tagged `colab`, `setup`, `given-earlier`, `points`), so that
   every notebook opens with its "Open in Colab" badge, sets itself up the same way (downloading
   the course from the address in course.toml on Colab), gives the earlier weeks' answers as GIVEN
   code, and states its points. The master is saved back only if something changed. README.md's
   table of badges is written from course.toml too (instructor/publish.py).
2. Run `otter assign` on a copy, then place its output:
     notebooks/NN_name.ipynb            the student notebook
     notebooks/tests/NN_name/qN.py      public tests (what grader.check runs)
     autograder/assignments/NN_name/tests/qN.py      public and hidden tests
     autograder/assignments/NN_name/assignment.json  questions and points
     nbgrader/                          the same course as an nbgrader course directory
                                        (instructor/nbgrader/)
     autograder/build/                  (git-ignored) otter's autograder zip, completed so that
                                        it grades on its own (instructor/gradescope_zip.py), and
                                        the filled-in notebook as a student would submit it
Committed output has no timestamps and fixed cell ids, so a second build changes nothing. Step 2 runs
only for the notebooks that are stale (instructor/stamps.py: one of their inputs changed since their
last build here, or a built file was changed), so a change to one master rebuilds that notebook (and
the later ones whose given-earlier cell it changes); `--force` builds them all.
"""
from __future__ import annotations

import json
import shutil
import string
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

from autograder import master_format

from . import gradescope_sheet, publish, registry, stamps, test_files
from . import masters as masters_  # masters.SOLUTIONS, looked up when used
from .gradescope_zip import complete_autograder_zip, engine_files
from .masters import (
    ROOT,
    cell_tags,
    defined_names,
    earlier_reference_code,
    latest_definitions,
    masters,
    read_master,
    reference_code,
)
from .nbgrader.export import build_nbgrader

NOTEBOOKS = ROOT / "notebooks"
AUTOGRADER = ROOT / "autograder"
BUILD = AUTOGRADER / "build"
ASSIGNMENTS = AUTOGRADER / "assignments"

# Notebooks that define names of their own which clash with the page's (09 follows the chapter,
# whose Block(cfg) is not the page's Block(dim, heads, causal)): their given-earlier cell makes the
# earlier answers inside a function and hands them out as one namespace, e.g. `page.MyTransformer`.
# Each piece there finds its neighbours (MyTransformer its Block) among that function's own names,
# so nothing the notebook defines later can change what it does.
NAMESPACES = {"09_gpt": "page"}

# The setup cell's first line is Colab's form title: Colab shows the cell collapsed under it (Jupyter
# reads a comment). The graders know the cell by the line after it (autograder/notebook.py is_setup).
SETUP_TEMPLATE = r"""#@title Setup (run this first) { display-mode: "form" }
# GIVEN: setup. Run this cell first. On your own computer it finds the course
# next to this notebook; on Google Colab it downloads the course and installs the grader (once,
# about 30 s). If something is missing it says what in one sentence and stops "Run all" here: do
# what it says, then run this cell again.
NOTEBOOK = "$name"
COURSE_URL = "$url"
GRADER = "otter-grader==7.0.0"

import io, os, re, shutil, subprocess, sys, time, urllib.error, urllib.request, zipfile


class SetupFailed(Exception):
    def _render_traceback_(self):                         # Jupyter shows the sentence, no traceback
        return [f"Setup failed: {self}"]


def _needs_setup(shell, etype, value, tb, tb_offset=None):   # a later cell, before this one worked
    message = f"{etype.__name__}: {value}. The setup cell has not worked yet: run it, do what it says."
    shell._showtraceback(etype, value, [message])


def _download(url, folder):
    print(f"Downloading the course from {url} ...", flush=True)
    try:
        data = urllib.request.urlopen(url, timeout=60).read()
        shutil.rmtree(folder, ignore_errors=True)
        zipfile.ZipFile(io.BytesIO(data)).extractall(folder)
    except urllib.error.HTTPError as e:
        raise SetupFailed(f"the course is not at {url} (the server says {e.code} {e.reason}): this "
                          "notebook's address is wrong or not published yet; tell your instructor") from None
    except zipfile.BadZipFile:
        raise SetupFailed(f"{url} did not send the course (not a zip file); tell your instructor") from None
    except OSError as e:                                  # offline, a wrong host name, a time-out
        raise SetupFailed(f"cannot reach {url} ({getattr(e, 'reason', e)}): check that this runtime "
                          "is connected to the internet, then run this cell again") from None
    print(f"  {len(data) / 1e6:.1f} MB, unpacked into {folder}")


def _install(package):
    print(f"Installing the grader ({package}), about 30 s:\n  collecting", end="", flush=True)
    start, lines = time.time(), []
    pip = subprocess.Popen([sys.executable, "-m", "pip", "install", "--progress-bar", "off", package],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in pip.stdout:                               # one word per package, as pip gets it
        lines.append(line.strip())
        if line.startswith(("Collecting ", "Processing ")):
            name = re.split(r"[-<>=!~\[ ;(]", os.path.basename(line.split()[1]))[0]
            print(" " + name, end="", flush=True)
    if pip.wait() != 0:
        error = next((x for x in reversed(lines) if x.startswith("ERROR")), lines[-1] if lines else "")
        raise SetupFailed(f"installing the grader failed ({error}): check that this runtime is "
                          "connected to the internet, then run this cell again")
    print(f"\n  installed in {time.time() - start:.0f} s")


try:
    _shell = get_ipython()
    _shell.set_custom_exc((NameError,), _needs_setup)      # until this cell has worked
except NameError:                                         # plain Python, not Jupyter
    _shell = None
if "google.colab" in sys.modules:                         # Colab: fetch the course once
    _root = os.path.abspath("transformer-course")
    if not os.path.isdir(os.path.join(_root, "notebooks", "tests", NOTEBOOK)):
        _download(os.environ.get("COURSE_URL") or COURSE_URL, _root)
else:                                                     # a clone or an unpacked bundle
    _root = next((os.path.abspath(f) for f in (".", "..") if os.path.isdir(os.path.join(f, "course"))), None)
if _root and _root not in sys.path:
    sys.path.insert(0, _root)
try:
    import otter
except ImportError:                                       # Colab: install the grader once
    _install(GRADER)
    import otter

try:
    import math
    import numpy as np
    import matplotlib.pyplot as plt
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from tqdm.auto import tqdm
    from course import *
    from course.training import Seed, Steps
    from course.otter_check import Grader
except ModuleNotFoundError as e:
    raise SetupFailed(f"Python cannot find {e.name}: " + (
        "start Jupyter in the course folder (the one that holds course/) or open this notebook on Colab"
        if e.name == "course" else f"install it (pip install {e.name}), then run this cell again")) from None

_tests = [os.path.join(folder, "notebooks", "tests", NOTEBOOK) for folder in filter(None, [_root])]
_tests += [os.path.join("tests", NOTEBOOK)]
grader = Grader(otter.Notebook(tests_dir=next((t for t in _tests if os.path.isdir(t)), _tests[-1])))
if _shell:
    _shell.set_custom_exc((), None)
print(f"Ready: torch {torch.__version__}, running on {device}.")"""

GIVEN_EARLIER_HEADER = '''\
# GIVEN: reference answers from the earlier notebooks, so that this week starts from working code.
# (If yours worked, they are the same thing. Read them if you got stuck last week.)'''

GIVEN_NAMESPACE_NOTE = '''\
# The chapter's Block(cfg) is not the page's Block(dim, heads, causal), so the earlier pieces are made
# inside a function and kept in `{space}`: {space}.MyTransformer, {space}.Block, {space}.WriteLeftToRight, ...
# Each of them goes on using the others from `{space}`, whatever is defined below.
from types import SimpleNamespace'''

GIVEN_SINCE_HEADER = """\
# GIVEN: the answers of notebook {since}, whole, beside `{space}`: the chapter's model.py (Config,
# SelfAttention, MLP, Block, GPT). (If your notebook {since} works, it is the same network.)"""

POINTS_TEMPLATE = ("**Points.** This notebook is worth **{total} points**: {auto} checked by the "
                   "autograder, {manual} read by your instructor (plots and explanations).")

def _spaced_before(name: str) -> str | None:
    """The last notebook in NAMESPACES before `name`, whose given cell a later notebook starts from."""
    earlier = [n for n in registry.upto(name)[:-1] if n in NAMESPACES]
    return earlier[-1] if earlier else None


def _since_spaced(name: str, spaced: str) -> list[str]:
    """The reference answers from `spaced` up to `name` (exclusive), each name's latest definition:
    what a notebook after a namespaced one gets at the top level (10 gets 09's GPT whole)."""
    names = registry.upto(name)[:-1]
    return latest_definitions([code for n in names[names.index(spaced):] for code in reference_code(n)])


def given_pieces(name: str) -> list[str]:
    """The earlier answers exactly as `name`'s given-earlier cell shows them: the reference code of
    the earlier masters, or, for a notebook in NAMESPACES, the latest definition of each name,
    indented into the function that makes the namespace; after such a notebook, that namespace's
    pieces, then the answers since at the top level."""
    spaced = _spaced_before(name)
    if spaced and name not in NAMESPACES:
        return given_pieces(spaced) + _since_spaced(name, spaced)
    blocks = earlier_reference_code(name)
    if name not in NAMESPACES:
        return blocks
    return [textwrap.indent(code, "    ") for code in latest_definitions(blocks)]


def given_earlier_code(name: str) -> str:
    """The source of `name`'s given-earlier cell."""
    spaced = _spaced_before(name)
    if spaced and name not in NAMESPACES:
        names = registry.upto(name)[:-1]
        since = ", ".join(n[:2] for n in names[names.index(spaced):])
        header = GIVEN_SINCE_HEADER.format(space=NAMESPACES[spaced], since=since)
        return "\n\n\n".join([given_earlier_code(spaced), header] + _since_spaced(name, spaced))
    pieces = given_pieces(name)
    if name not in NAMESPACES:
        return "\n\n\n".join([GIVEN_EARLIER_HEADER] + pieces)
    space = NAMESPACES[name]
    names = [n for code in latest_definitions(earlier_reference_code(name)) for n in defined_names(code)]
    names = list(dict.fromkeys(names))
    handed = ", ".join(f"{n}={n}" for n in names)
    returned = "\n".join(textwrap.wrap(f"return SimpleNamespace({handed})", 96,
                                       initial_indent="    ", subsequent_indent="        ",
                                       break_long_words=False, break_on_hyphens=False))
    maker = f"_make_{space}"
    body = "\n\n".join(pieces)
    return (f"{GIVEN_EARLIER_HEADER}\n{GIVEN_NAMESPACE_NOTE.format(space=space)}\n\n\n"
            f"def {maker}():\n{body}\n\n{returned}\n\n\n{space} = {maker}()")


def reference_namespace(upto: str | None = None) -> dict:
    """Run the reference answers of every master up to and including `upto` (default: the last);
    return the namespace.

    Benchmarks and tests use this to get the solutions' own classes (WithPosition, MyTransformer, ...).
    From a notebook in NAMESPACES on, the earlier answers are where that notebook has them
    (`reference_namespace("09_gpt")["page"].MyTransformer`), beside its own (`GPT`, `Config`).
    """
    import math

    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from tqdm.auto import tqdm

    import course
    from course import stories, training

    namespace: dict = {"math": math, "np": np, "torch": torch, "nn": nn, "F": F, "tqdm": tqdm,
                       "Seed": training.Seed, "Steps": training.Steps}
    namespace.update({k: getattr(course, k) for k in course.__all__})
    namespace.update({k: getattr(stories, k) for k in ("StoryTokens", "StoryText", "GetBatch")})

    class _Lazy(dict):            # story_vocab etc. load the stories only when a function uses them
        def __missing__(self, key):
            if key in ("story_vocab", "STORY_UNK", "STORY_MASK", "corpus"):
                return getattr(stories, key)
            raise KeyError(key)

    namespace = _Lazy(namespace)
    names = registry.upto(upto or registry.notebooks()[-1])
    spaced = [n for n in names if n in NAMESPACES]
    if spaced:        # as in that notebook: the earlier answers inside its namespace, then its own
        exec(compile(given_earlier_code(spaced[-1]), f"<{spaced[-1]} given>", "exec"), namespace)
        names = names[names.index(spaced[-1]):]
    for name in names:
        if (masters_.SOLUTIONS / f"{name}.ipynb").exists():
            for code in reference_code(name):
                exec(compile(code, f"<{name} reference>", "exec"), namespace)
    return namespace


def questions(nb: nbformat.NotebookNode) -> list[dict]:
    """[{'name': 'q1', 'points': 2, 'manual': False}, ...] from the BEGIN QUESTION cells (a question
    without points is worth one)."""
    return [{"name": q.name, "points": 1 if q.points is None else q.points, "manual": q.manual}
            for q in master_format.questions(nb.cells)]


def _points_line(qs: list[dict]) -> str:
    def total(items):
        return sum(_sum_points(q["points"]) for q in items)
    auto = total([q for q in qs if not q["manual"]])
    manual = total([q for q in qs if q["manual"]])
    return POINTS_TEMPLATE.format(total=_fmt(auto + manual), auto=_fmt(auto), manual=_fmt(manual))


def _sum_points(points) -> float:
    return float(sum(points)) if isinstance(points, list) else float(points)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def normalize(nb: nbformat.NotebookNode, prefix: str) -> nbformat.NotebookNode:
    """Clear outputs, keep only the metadata a notebook needs, and number the cells."""
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{prefix}-{i:03d}"
        if cell.cell_type == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        kept = {k: v for k, v in cell.get("metadata", {}).items()
                if k in ("tags", "deletable", "editable", "otter")}
        cell["metadata"] = kept
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        **({"otter": nb.metadata["otter"]} if "otter" in nb.metadata else {}),
    }
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def write_if_changed(nb: nbformat.NotebookNode, path: Path) -> bool:
    text = nbformat.writes(nb) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def setup_code(name: str, settings: publish.Publish) -> str:
    """The source of `name`'s setup cell, downloading the bundle from course.toml's address."""
    return string.Template(SETUP_TEMPLATE).substitute(name=name, url=settings.bundle)


def prepare_master(name: str, settings: publish.Publish | None = None) -> bool:
    """Rewrite the build-owned cells of one master; True if the file changed. The first cell after
    otter's config cell is the "Open in Colab" badge (tagged `colab`), added if it is missing."""
    settings = settings or publish.load()
    nb = read_master(name)
    if not any("colab" in cell_tags(c) for c in nb.cells):
        nb.cells.insert(1, nbformat.v4.new_markdown_cell(metadata={"tags": ["colab"]}))
    for cell in nb.cells:
        tags = cell_tags(cell)
        if "colab" in tags:
            cell["source"] = settings.badge(name)
        elif "setup" in tags:
            cell["source"] = setup_code(name, settings)
        elif "given-earlier" in tags:
            cell["source"] = given_earlier_code(name)
        elif "points" in tags:
            cell["source"] = _points_line(questions(nb))
    return write_if_changed(normalize(nb, name[:2]), masters_.SOLUTIONS / f"{name}.ipynb")


def _replace_dir(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst)


def assign(name: str) -> list[str]:
    """Run otter assign on one master and place its output; returns the paths it changed."""
    changed = []
    with tempfile.TemporaryDirectory(prefix=f"build-{name}-") as tmp_name:
        tmp = Path(tmp_name)
        master = tmp / f"{name}.ipynb"
        shutil.copy(masters_.SOLUTIONS / f"{name}.ipynb", master)
        dist = tmp / "dist"
        result = subprocess.run([sys.executable, "-m", "otter", "assign", str(master), str(dist)],
                                cwd=tmp, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"otter assign failed on {name}:\n{result.stdout}\n{result.stderr}")

        student = normalize(nbformat.read(dist / "student" / f"{name}.ipynb", as_version=4), name[:2])
        if write_if_changed(student, NOTEBOOKS / f"{name}.ipynb"):
            changed.append(f"notebooks/{name}.ipynb")
        for src, dst in [(dist / "student" / "tests", NOTEBOOKS / "tests" / name),
                         (dist / "autograder" / "tests", ASSIGNMENTS / name / "tests")]:
            before = {p.name: p.read_bytes() for p in dst.glob("*.py")} if dst.exists() else {}
            if dst.is_relative_to(ASSIGNMENTS):                   # the grader's copy: linted
                test_files.rewrite_folder(src, read_master(name))     # as the masters wrote it
            test_files.mark_folder(src, name)                     # "# Generated by `course build`"
            _replace_dir(src, dst)
            if before != {p.name: p.read_bytes() for p in dst.glob("*.py")}:
                changed.append(str(dst.relative_to(ROOT)))
        # JSON holds no comment: the generated-file line is its first key (the readers take only theirs)
        info = {"_generated": test_files.GENERATED.removeprefix("# ").format(name=name),
                "name": name, "questions": questions(read_master(name))}
        info_path = ASSIGNMENTS / name / "assignment.json"
        text = json.dumps(info, indent=1) + "\n"
        if not info_path.exists() or info_path.read_text() != text:
            info_path.write_text(text)
            changed.append(str(info_path.relative_to(ROOT)))

        BUILD.mkdir(parents=True, exist_ok=True)
        for z in (dist / "autograder").glob("*.zip"):         # otter's zip, kept to pack again
            shutil.copyfile(z, BUILD / f"{name}-otter.zip")
            complete_autograder_zip(z, BUILD / f"{name}-autograder.zip", name)
            gradescope_sheet.write(BUILD, name)             # beside it: what Gradescope's pages ask
        filled = normalize(nbformat.read(dist / "autograder" / f"{name}.ipynb", as_version=4), name[:2])
        write_if_changed(filled, BUILD / f"{name}-solution.ipynb")
    return changed


def write_readme_badges(settings: publish.Publish, readme: Path = ROOT / "README.md") -> bool:
    """Write the table of "Open in Colab" badges (every master) into README.md; True if it changed."""
    text = readme.read_text()
    new = publish.with_badge_table(text, settings, masters())
    if new != text:
        readme.write_text(new)
    return new != text


def build(names: list[str] | None = None, workers: int = 2, force: bool = False,
          report=None) -> list[str]:
    """Build the named masters (default: all) that are stale (instructor/stamps.py), or all of them
    with `force`; returns the committed paths that changed. `report(name, why)` hears of each
    notebook built and why."""
    names = names or masters()
    settings = publish.load()
    changed = [f"solutions/{n}.ipynb" for n in names if prepare_master(n, settings)]
    if write_readme_badges(settings):
        changed.append("README.md")
    why = {n: "--force" if force else stamps.stale(n) for n in names}
    todo = [n for n in names if why[n]]
    for name in todo:
        (report or (lambda *a: None))(name, why[name])
    with ThreadPoolExecutor(workers) as pool:
        for paths in pool.map(assign, todo):
            changed.extend(paths)
    changed.extend(build_nbgrader(todo) if todo else [])   # nbgrader/: the same masters, for nbgrader
    for name in names:                        # the Gradescope zips: packed again when the engine changed
        # course.toml too: its [gradescope] visibility goes into the zip and the sheet
        packed = [BUILD / f"{name}-otter.zip", publish.CONFIG] + [path for path, _ in engine_files(name)]
        if name not in todo and stamps.zip_stale(name, packed) and packed[0].is_file():
            complete_autograder_zip(packed[0], BUILD / f"{name}-autograder.zip", name)
            gradescope_sheet.write(BUILD, name)
        if name in todo or stamps.zip_stale(name, packed):
            stamps.write(name, packed)
    return changed


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="course build", description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", help="NN_name of the masters to build (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="fail if the build changed any committed file (for CI)")
    parser.add_argument("--force", action="store_true",
                        help="build every named notebook, stale or not (default: the stale ones)")
    args = parser.parse_args(argv)
    try:
        known = registry.notebooks()
        strays = registry.strays()
    except publish.ConfigError as exc:
        print(f"course build: {exc}", file=sys.stderr)
        return 2
    if strays:
        print("course build: " + "; ".join(strays), file=sys.stderr)
        return 2
    unknown = [n for n in args.notebooks if n not in known]
    if unknown:
        parser.error(f"unknown notebook(s) {unknown}; choose from {known} (course.toml's [course] notebooks)")
    built: list[str] = []

    def report(name: str, why: str) -> None:
        built.append(name)
        print(f"building {name}: {why}", flush=True)
    try:
        changed = build(args.notebooks or None, force=args.force, report=report)
    except publish.ConfigError as exc:
        print(f"course build: {exc}", file=sys.stderr)
        return 2
    for path in changed:
        print(f"updated {path}")
    print(f"built {len(built)} of {len(args.notebooks or masters())} notebook(s) (the others were up to "
          f"date); {len(changed)} file(s) changed")
    if args.check and changed:
        print("The committed build was out of date with solutions/: run `course build` and commit.")
        return 1
    return 0
