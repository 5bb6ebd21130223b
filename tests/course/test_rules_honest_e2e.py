"""Honest answers the rules once flagged, graded whole through `course grade`'s engine: 09 q6's count
by hand written with named sizes (a name a GIVEN function of a later section binds for itself), and
07 q2's pieces counted by their names with getattr on the notebook's own network. Each notebook is
the solution with that one cell replaced, and must get full marks with status ok."""
from __future__ import annotations

import pytest

from autograder import mutants
from autograder.assignment import load

pytestmark = pytest.mark.e2e

# the 09 solution's config: D = dim, V = vocab_size, T = context; a block is attention (qkv and out),
# the MLP (up and down) and two LayerNorms; the head is tied to the token table
GPT_BY_HAND = """D, V, T = 128, 1024, 128
block = (D * 3 * D + 3 * D) + (D * D + D) + (D * 4 * D + 4 * D) + (4 * D * D + D) + 2 * (2 * D)
gpt_params = V * D + T * D + 4 * block + 2 * D
tying_saves = 2002 * 128
print(gpt_params, tying_saves)
"""
PIECES_BY_NAME = """big = MyTransformer(2002)
sizes = {}
for name in ["embed", "position", "blocks", "norm", "out"]:
    sizes[name] = sum(p.numel() for p in getattr(big, name).parameters())
for name, child in big.named_children():
    assert hasattr(big, name) and Count(getattr(big, name)) == Count(child)
n_params = sum(sizes.values())
largest_piece = max(["embed", "position", "norm", "out"], key=lambda k: sizes[k])
print(n_params, largest_piece)
"""
ANSWERS = {"09_gpt": ("gpt_params =", GPT_BY_HAND), "07_my_transformer": ("largest_piece =", PIECES_BY_NAME)}
BUILT = [n for n in ANSWERS if (mutants.BUILD / f"{n}-solution.ipynb").exists()]


@pytest.mark.parametrize("name", BUILT)
def test_the_honest_answer_gets_full_marks(name, tmp_path):
    holds, code = ANSWERS[name]
    nb = mutants.swap_last(name, lambda source: holds in source, code, f"{name}: no cell sets {holds}")
    mutants.write_notebooks(tmp_path / "in", {"honest": nb}, lambda x: x)
    row = mutants.grade_folder(name, tmp_path / "in", tmp_path / "out", workers=1)["honest"]
    full = {q.name: q.max_points for q in load(name).auto}
    assert {q: float(row[q] or 0) for q in full} == full, row
    assert row["grading_status"] == "ok", row["grading_status"]
