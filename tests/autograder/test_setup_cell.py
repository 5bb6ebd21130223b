"""The setup cell is the course's: a notebook released by an earlier build (an earlier setup cell)
grades as today's, and code a student puts into the setup cell is not run.

Through the real ``course grade`` on 03_attention, beside an honest blank notebook that must grade as
alone; and the reading itself, on the runner's and the judge's side alike.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import forgery
import pytest

from autograder.notebook import SETUP_MARK, is_setup, read_notebook, setup_cell

REPO = Path(__file__).resolve().parents[2]

# A setup cell as an earlier release wrote it (without the Colab download): other words, and
# subprocess, which in a student's own cell reads as suspicious code.
OLD_SETUP = SETUP_MARK + ''' Run this cell first (an earlier release's words).
NOTEBOOK = "03_attention"
import os, subprocess, sys
try:
    import otter
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "otter-grader==7.0.0"], check=True)
    import otter
import math
import numpy as np
import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.nn.functional as F
from course import *
grader = otter.Notebook(tests_dir=os.path.join("tests", NOTEBOOK))
'''

# Code added to a setup cell: it would change torch (tampering: zero points) if it ran.
ANSWER = '''
torch.softmax = lambda *a, **k: torch.nn.functional.softmax(*a, **k)
'''


def _with_setup(path: Path, make) -> dict:
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code"
                and is_setup("".join(c["source"])))
    cell["source"] = make("".join(cell["source"]))
    return nb


def test_the_setup_cell_is_known_by_its_mark_after_colabs_title():
    """Today's setup cell opens with Colab's form title (instructor/build.py), an earlier release's
    with the mark itself: both are the setup cell; a title alone, or the mark further down, is not."""
    title = '#@title Setup (run this first) { display-mode: "form" }\n'
    assert is_setup(title + SETUP_MARK + " Run this cell first.\nNOTEBOOK = 1")
    assert is_setup(SETUP_MARK + " Run this cell first.\nNOTEBOOK = 1")
    assert not is_setup(title + "import sys") and not is_setup("x = 1\n" + SETUP_MARK)


def test_the_setup_cell_is_replaced_by_the_blank_notebooks_own():
    blank = json.loads(forgery.BLANK.read_text())
    given = ["".join(c["source"]) for c in blank["cells"] if c["cell_type"] == "code"]
    today = setup_cell(given)
    assert today and today.startswith('#@title') and is_setup(today)   # Colab's title, then the mark
    old = _with_setup(forgery.BLANK, lambda _: OLD_SETUP + ANSWER)
    cells, problem = read_notebook(json.dumps(old).encode(), today)
    assert problem is None
    assert [c["source"] for c in cells] == given           # nothing of the old cell is left
    cells, _ = read_notebook(json.dumps(old).encode())     # without `setup`: read as it is
    assert any(ANSWER in c["source"] for c in cells)


@pytest.mark.e2e
def test_an_earlier_setup_cell_grades_as_todays_and_code_in_it_is_not_run(tmp_path):
    if not forgery.SOLUTION.exists():
        subprocess.run([sys.executable, "-m", "course", "build", forgery.NAME], cwd=REPO, check=True)
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "earlier release.ipynb").write_text(
        json.dumps(_with_setup(forgery.SOLUTION, lambda _: OLD_SETUP)))
    (subs / "code in setup.ipynb").write_text(
        json.dumps(_with_setup(forgery.SOLUTION, lambda src: src + ANSWER)))
    (subs / "honest blank.ipynb").write_bytes(forgery.BLANK.read_bytes())

    def grade(paths: list[Path], out: Path) -> dict[str, dict]:
        cmd = [sys.executable, "-m", "autograder", *map(str, paths), "--assignment", forgery.NAME,
               "--out", str(out), "--no-progress", "--workers", "2"]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO,
                             env=dict(os.environ, OMP_NUM_THREADS="1"))
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
        with open(out / "grades.csv", newline="", encoding="utf-8") as f:
            return {r["file"]: r for r in csv.DictReader(f)}

    rows = grade([subs], tmp_path / "out")
    full, _ = forgery.points()
    earlier = rows["earlier release.ipynb"]
    assert earlier["grading_status"] == "ok", earlier                 # not "suspicious code"
    assert float(earlier["total_points_earned"]) == full
    added = rows["code in setup.ipynb"]                                 # its extra code never ran
    assert added["grading_status"] == "ok" and float(added["total_points_earned"]) == full, added
    alone = grade([subs / "honest blank.ipynb"], tmp_path / "alone")
    assert rows["honest blank.ipynb"] == alone["honest blank.ipynb"]
    assert alone["honest blank.ipynb"]["grading_status"] == "ok"
