"""Every number a notebook's text says a run prints is what a full run of its solution prints.

The notebooks whose full run takes seconds (01 trains NoTalking for 1500 steps in a few; 09 trains
nothing) are run here as the TA runs them (`course solutions`, not quick mode), and each number their
text quotes is read from the run's output and looked for, formatted as the text writes it, in the
student notebook's markdown. A text that still quotes an older run fails. (Notebooks 03, 05 and 06's
experiments are held to their text on every seed by tests/course/test_experiments.py; the student's
own route, in quick mode, by tests/instructor/test_student_route.py.)
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import pytest

from instructor import build, solutions

pytestmark = pytest.mark.e2e

# notebook: [(what the run prints, with the number as its group; how the text quotes it)]
STATED = {
    "01_no_talking": [
        (r"last 100 steps: (\d+\.\d\d)", "prints {}"),
        (r"position 2: (is 0\.\d\d, the 0\.\d\d, cat 0\.\d\d, alive 0\.\d\d)", 'guesses "{}"'),
    ],
    "09_gpt": [
        (r"Starting loss: (\d+\.\d+)", "a correct run of this notebook prints {:.2f}"),
        (r"starting loss without init_weights: (\d+\.\d)", "about {:.0f} without `init_weights`"),
    ],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("solutions")
    old = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        assert solutions.main([*STATED, "--out", str(out)]) == 0, "a solution notebook failed"
    finally:
        os.environ.pop("OMP_NUM_THREADS") if old is None else os.environ.update(OMP_NUM_THREADS=old)
    return out


def _printed(run: dict) -> str:
    return "\n".join("".join(o.get("text", "")) for c in run["cells"] if c["cell_type"] == "code"
                     for o in c.get("outputs", []))


def _quoted(value: str, said: str) -> str:
    try:
        return said.format(float(value))
    except ValueError:                         # not one number: quoted as printed
        return said.format(value)


@pytest.mark.parametrize("name", sorted(STATED))
def test_the_numbers_the_text_states_are_what_a_full_run_prints(runs, name):
    printed = _printed(json.loads((runs / f"{name}.ipynb").read_text(encoding="utf-8")))
    student = nbformat.read(build.NOTEBOOKS / f"{name}.ipynb", as_version=4)
    text = " ".join(" ".join(c.source for c in student.cells if c.cell_type == "markdown").split())
    for pattern, said in STATED[name]:
        found = re.search(pattern, printed)
        assert found, f"{name}'s run printed nothing like {pattern!r}"
        quote = _quoted(found.group(1), said) if "{:" in said else said.format(found.group(1))
        assert quote in text, f"{name}'s run printed {found.group(0)!r}; its text should say {quote!r}"
