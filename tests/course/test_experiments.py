"""The course's own experiments (03: why sqrt(d), three sites; 05: one head or four; 06: residuals and norms).

Each test runs the experiment's GIVEN cell, as the master notebook writes it, with the solutions'
pieces, on the seeds the course uses (0, 1, 2), and checks that it shows what the text says: the
direction and rough size of the effect on every seed, and the exact numbers the text states at the
notebook's seed, 0.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from instructor.build import reference_namespace

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (0, 1, 2)


def _cells(notebook: str) -> list[str]:
    nb = json.loads((ROOT / "solutions" / f"{notebook}.ipynb").read_text())
    return ["".join(c["source"]) for c in nb["cells"]]


def _cell(notebook: str, start: str) -> str:
    """The code cell that starts with `start`, as the solution runs it (prompts left out)."""
    markers = r"# BEGIN PROMPT\n.*?# END PROMPT\n|# BEGIN SOLUTION NO PROMPT\n|# END SOLUTION\n?"
    cells = [re.sub(markers, "", c, flags=re.S) for c in _cells(notebook)]
    found = [c for c in cells if c.startswith(start)]
    assert len(found) == 1, f"{notebook}: {len(found)} cells start with {start!r}"
    return found[0]


def _text(notebook: str) -> str:
    return " ".join(" ".join(_cells(notebook)).split())


def _run(source: str, namespace: dict, seed: int | None = None) -> str:
    """Run a cell (at another seed: its Seed(0) made Seed(seed)); what it printed."""
    if seed is not None:
        assert "Seed(0)" in source
        source = source.replace("Seed(0)", f"Seed({seed})")
    out = io.StringIO()
    namespace["tqdm"] = lambda it, **kw: it       # the solutions' progress bar, silenced
    with contextlib.redirect_stdout(out):
        exec(source, namespace)
    return out.getvalue()


def _rows(printed: str) -> list[list[str]]:
    return [line.split() for line in printed.splitlines()[1:]]


@pytest.fixture
def full_steps(monkeypatch):
    monkeypatch.delenv("COURSE_QUICK", raising=False)


# ---- 03: why divide by sqrt(d) -------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_unscaled_rows_freeze_as_d_grows_scaled_do_not(seed):
    namespace = reference_namespace("03_attention")
    printed = _run(_cell("03_attention", "# GIVEN: the largest weight of a row"), namespace, seed)
    largest = namespace["largest"]
    unscaled = [largest[d][0] for d in (8, 64, 512)]
    scaled = [largest[d][1] for d in (8, 64, 512)]
    assert unscaled[0] < unscaled[1] < unscaled[2], unscaled                 # colder as d grows
    assert 0.5 < unscaled[0] < 0.65 and unscaled[2] > 0.9, unscaled
    assert all(0.21 < s < 0.28 for s in scaled), scaled
    if seed == 0:                       # what the text says the cell prints
        assert _rows(printed) == [["8", "0.56", "0.24"], ["64", "0.84", "0.24"], ["512", "0.94", "0.25"]]
        assert "the table reads 0.56, 0.84 and 0.94 unscaled against 0.24, 0.24 and 0.25 scaled" \
            in _text("03_attention")


def test_three_sites_average_and_copy():
    namespace = reference_namespace("03_attention")
    exec(_cell("03_attention", "# GIVEN: three sites"), namespace)
    printed = _run(_cell("03_attention", "# GIVEN: your Attention on the three sites"), namespace)
    assert "tensor([[3., 5.],\n        [3., 5.]" in printed                     # the average
    assert "tensor([[3., 4.],\n        [3., 4.]" in printed                     # a copy of site 1
    exec(_cell("03_attention", "flat_heard = [3.0"), namespace)
    assert namespace["flat_heard"] == [3.0, 5.0] and namespace["sharp_heard"] == [3.0, 4.0]


# ---- 05: one wide head or four narrow ones ----------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_four_heads_get_there_sooner_not_further(seed, full_steps):
    namespace = reference_namespace("05_multihead")
    printed = _run(_cell("05_multihead", "# GIVEN: one head of width 32"), namespace, seed)
    (one, half_1, end_1), (four, half_4, end_4) = _rows(printed)
    assert (one, four) == ("1", "4")
    half_1, end_1, half_4, end_4 = map(float, (half_1, end_1, half_4, end_4))
    assert half_4 < half_1 - 0.15, printed            # four heads: sooner
    assert max(end_1, end_4) < 0.6 and abs(end_1 - end_4) < 0.05, printed    # both near 0.50 at the end
    if seed == 0:
        assert (half_1, half_4, end_1, end_4) == (0.78, 0.53, 0.51, 0.50), printed
        assert "the table reads 0.78 against 0.53 after 400 steps and 0.51 against 0.50 after 800" \
            in _text("05_multihead")


# ---- 06: why the residual and the norm ---------------------------------------------------------------------
@pytest.mark.e2e
@pytest.mark.parametrize("seed", SEEDS)
def test_six_blocks_need_the_residual_not_the_norm(seed, full_steps):
    namespace = reference_namespace("06_block")
    exec(_cell("06_block", "class NoResidual(Block):"), namespace)
    printed = _run(_cell("06_block", "# GIVEN: six blocks"), namespace, seed)
    loss = {row[0]: float(row[1]) for row in _rows(printed)}
    assert loss["Block"] < 0.6 and loss["NoNorm"] < 0.65, printed          # both learn the two sentences
    assert loss["NoResidual"] > 6.3, printed                                 # at the NoTalking level, 6.55
    if seed == 0:
        assert loss == {"Block": 0.53, "NoResidual": 6.57, "NoNorm": 0.51}, printed
        assert "they read 0.53 (`Block`), 6.57 (`NoResidual`) and 0.51 (`NoNorm`)" in _text("06_block")
