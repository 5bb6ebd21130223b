"""Every notebook in the student's own Python, as a student runs it.

Each week's release (`course release --upto NN_name`) is served on 127.0.0.1 and a fake Colab
(tests/support/colab.py: only what Colab preinstalls) runs that week's notebook from its setup cell
on, which downloads the release and installs the grader as on Colab. Each notebook runs twice, in
quick mode, leaving out the cells the grader leaves out (tagged otter_ignore: the long training runs,
whose course code the import test reads, tests/instructor/test_public_imports.py):

- with the solution's answers: no cell fails and every `grader.check` passes;
- blank, as released: every `grader.check` fails with its own message, never with an error inside
  the check (a missing module, a name the check does not have).

Around every check a probe compares the notebook's state before and after it (the random numbers
of Python, NumPy and torch, every name and what it holds, the networks' train/eval flags): a check
leaves the notebook as it found it, so the cells after it print the same numbers with or without it.
Slow (minutes): the whole course, notebook by notebook.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from colab import Served, fake_colab, kernel, run_all, text

from autograder import mutants
from instructor import build, publish, release

pytestmark = pytest.mark.e2e
NAMES = build.registry.notebooks()
SHARED = Path(os.environ.get("COURSE_SHARED") or build.ROOT.parent / "shared")
STORIES = SHARED / "data" / "tinystories" / "TinyStories-train-first2MiB.txt"
CHECK = re.compile(r"""^grader\.check\(["'](q\w+)["']\)$""")
# The notebook's state as a check could change it, printed by the probe after each check.
PROBE = '''\
def _route_state():
    import random, numpy, torch
    names = {n: id(v) for n, v in get_ipython().user_ns.items()
             if not n.startswith("_") and n not in ("In", "Out", "exit", "quit", "get_ipython")}
    flags = {}
    for n, v in get_ipython().user_ns.items():
        if isinstance(v, torch.nn.Module):
            try:
                flags[n] = [m.training for m in v.modules()]
            except Exception:          # a blank answer's network, its __init__ never run
                flags[n] = None
    return {"torch": torch.random.get_rng_state().tolist(), "numpy": repr(numpy.random.get_state()),
            "random": repr(random.getstate()), "names": names, "flags": flags,
            "grad": torch.is_grad_enabled(), "dtype": str(torch.get_default_dtype())}
'''
AFTER = ('_route_now = _route_state()\n'
         'print("STATE " + ("kept" if _route_now == _route_before else "changed: " + ", ".join(\n'
         '    k for k in _route_now if _route_now[k] != _route_before[k])))')
# Numbers the text states that a correct run prints: (what the run prints, a regular expression
# with the number as its group; how the text states it, formatted with the number printed).
STATED = {"09_gpt": [
    (r"Starting loss: (\d+\.\d+)", "a correct run of this notebook prints {:.2f}"),
    (r"starting loss without init_weights: (\d+\.\d)", "about {:.0f} without `init_weights`"),
]}
# What shows that a check broke instead of failing: an error of the check's own code.
BROKEN = re.compile(r"ModuleNotFoundError|ImportError|No module named|NameError: name '(student|"
                    r"course|torch|answers|checks)'")


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    """(the fake Colab's kernel name, the served address of week NN's bundle by NN, a folder)."""
    tmp = tmp_path_factory.mktemp("student-route")
    public = tmp / "public"
    for name in NAMES:
        release.write_release(public / name, release.released_names(name))
    server = Served(public)
    python = fake_colab(tmp / "colab")
    with pytest.MonkeyPatch.context() as patch:
        # the stories as Colab downloads them; here the shared copy (this machine is offline)
        stories = {"COURSE_STORIES_FILE": str(STORIES)} if STORIES.exists() else {}
        name = kernel(tmp, python, patch, COURSE_QUICK="1", **stories)
        yield name, {n: f"{server.url}/{n}/{publish.BUNDLE_NAME}" for n in NAMES}, tmp
    server.close()


def _prepared(nb: nbformat.NotebookNode, name: str, url: str) -> tuple[nbformat.NotebookNode, list]:
    """The notebook set up for `url`, a probe around each check; and the checks' (question, cell)."""
    cells, checks = [], []
    for cell in nb.cells:
        if "setup" in cell.metadata.get("tags", []):
            cell.source = build.setup_code(name, publish.Publish("someone/course", bundle_url=url))
            cells += [cell, nbformat.v4.new_code_cell(PROBE)]
            continue
        found = CHECK.match(cell.source.strip()) if cell.cell_type == "code" else None
        if found:
            cells.append(nbformat.v4.new_code_cell("_route_before = _route_state()"))
            cells.append(cell)
            cells.append(nbformat.v4.new_code_cell(AFTER))
            checks.append((found.group(1), cell))
        else:
            cells.append(cell)
    nb.cells = cells
    return nb, checks


def _run(colab, nb: nbformat.NotebookNode, name: str, where: str) -> tuple[list, list]:
    kernel_name, urls, tmp = colab
    nb, checks = _prepared(nb, name, urls[name])
    cells = run_all(nb, kernel_name, Path(tmp) / where / name, stop=False,
                    skip=lambda c: "otter_ignore" in c.metadata.get("tags", []))
    return cells, checks


def _states(cells) -> list[str]:
    return [line for c in cells for line in text(c).splitlines() if line.startswith("STATE ")]


@pytest.mark.parametrize("name", NAMES)
def test_the_solution_passes_every_check_in_the_students_python(colab, name):
    cells, checks = _run(colab, mutants.solution_notebook(name), name, "solution")
    failed = [(i, c.source[:80], text(c)[-600:]) for i, c in enumerate(cells)
              if any(o.output_type == "error" for o in c.get("outputs", []))]
    assert not failed, failed
    assert checks, f"{name} has no grader.check cell"
    for question, cell in checks:
        said = text(cell).strip()
        assert said == f"{question} results: All test cases passed!", said[-1500:]
    states = _states(cells)
    assert states == ["STATE kept"] * len(checks), states
    for printed, said in STATED.get(name, []):
        value = next(float(m.group(1)) for c in cells if (m := re.search(printed, text(c))))
        shown = " ".join(" ".join(c.source for c in cells if c.cell_type == "markdown").split())
        assert said.format(value) in shown, (printed, value)


@pytest.mark.parametrize("name", NAMES)
def test_a_blank_notebook_fails_every_check_with_its_own_message(colab, name):
    nb = nbformat.read(build.NOTEBOOKS / f"{name}.ipynb", as_version=4)
    cells, checks = _run(colab, nb, name, "blank")
    assert checks, f"{name} has no grader.check cell"
    for question, cell in checks:
        said = text(cell)
        assert not any(o.output_type == "error" for o in cell.get("outputs", [])), said[-1500:]
        assert said.startswith(f"{question} results:") and "All test cases passed" not in said, said[-1500:]
        assert not BROKEN.search(said), said[-1500:]
    states = _states(cells)
    assert states == ["STATE kept"] * len(checks), states
