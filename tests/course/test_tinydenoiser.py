"""TinyDenoiser and Rotate (course/tinydenoiser.py), its shipped loss curve, and where students see them."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import course
from course import tinydenoiser_curve
from course.tinydenoiser import AllHeads, Rotate, TinyDenoiser

ROOT = Path(__file__).resolve().parents[2]


def _perturb(net: torch.nn.Module, seed: int = 0) -> None:
    """Non-trivial weights everywhere (SmallStart's are so small that every site looks alike)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in net.named_parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape) / math.sqrt(p.shape[-1]))
            elif name.endswith("weight"):
                p.copy_(1 + 0.5 * torch.randn(p.shape))
            else:
                p.copy_(0.5 * torch.randn(p.shape))


# ---- Rotate ------------------------------------------------------------------------------------------
def test_rotated_dot_products_depend_only_on_the_distance():
    torch.manual_seed(1)
    d, L = 16, 40
    a, b = torch.randn(2, d)

    def dot(i, j):
        q, k = torch.zeros(L, d), torch.zeros(L, d)
        q[i], k[j] = a, b
        return (Rotate(q)[i] @ Rotate(k)[j]).item()

    for gap in (-7, -1, 0, 2, 11):
        values = [dot(j + gap, j) for j in range(max(0, -gap), L - max(0, gap), 5)]
        assert max(values) - min(values) < 1e-4, (gap, values)
    assert abs(dot(3, 3) - (a @ b).item()) < 1e-4             # no gap: the plain dot product
    assert abs(dot(5, 1) - dot(1, 5)) > 1e-3                   # but the sign of the gap matters


def test_rotate_turns_pairs_and_keeps_lengths():
    torch.manual_seed(2)
    x = torch.randn(3, 2, 9, 8)
    y = Rotate(x)
    assert y.shape == x.shape
    assert torch.allclose(y[..., 0, :], x[..., 0, :])         # position 0 is not turned
    pairs_x = x.unflatten(-1, (4, 2)).norm(dim=-1)
    pairs_y = y.unflatten(-1, (4, 2)).norm(dim=-1)
    assert torch.allclose(pairs_x, pairs_y, atol=1e-5)        # each pair is turned, not stretched
    angle = math.atan2(y[0, 0, 1, 1], y[0, 0, 1, 0]) - math.atan2(x[0, 0, 1, 1], x[0, 0, 1, 0])
    assert abs(math.remainder(angle - 1.0, 2 * math.pi)) < 1e-4   # first pair at position 1: 1 radian


# ---- the network -------------------------------------------------------------------------------------
def test_sizes_and_parameter_count_like_the_default_mytransformer():
    from benchmarks.reference import ReferenceNamespace

    net = TinyDenoiser(2002)
    count = sum(p.numel() for p in net.parameters())
    assert count == 1_306_322
    mine = ReferenceNamespace()["MyTransformer"](2002)
    assert sum(p.numel() for p in mine.parameters()) - count == 64 * 128      # only the position table
    assert len(net.blocks) == 4 and net.blocks[0].attention.heads == 4
    for x, shape in [(torch.randint(2002, (3, 32)), (3, 32, 2002)), (torch.randint(2002, (7,)), (7, 2002)),
                     (torch.randint(2002, (2, 100)), (2, 100, 2002))]:           # no max_length
        assert net(x).shape == shape


def test_all_heads_at_once_is_the_heads_one_by_one():
    """AllHeads computes, for every head, softmax(Rotate(q) Rotate(k)^T / sqrt(head_dim)) v with that
    head's rows of qkv, and joins the heads side by side before mix."""
    torch.manual_seed(3)
    dim, heads, L = 12, 3, 7
    attention = AllHeads(dim, heads)
    _perturb(attention)
    x = torch.randn(2, L, dim)
    W = attention.qkv.weight
    hd = dim // heads
    outs = []
    for h in range(heads):
        Wq, Wk, Wv = (W[part * dim + h * hd: part * dim + (h + 1) * hd] for part in range(3))
        q, k, v = Rotate(x @ Wq.T), Rotate(x @ Wk.T), x @ Wv.T
        outs.append(torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(hd), dim=-1) @ v)
    want = attention.mix(torch.cat(outs, dim=-1))
    assert torch.allclose(attention(x), want, atol=1e-5)
    assert attention.weights.shape == (2, heads, L, L) and not attention.weights.requires_grad


def test_attention_agrees_with_pytorch_on_rotated_queries_and_keys():
    torch.manual_seed(4)
    attention = AllHeads(16, 4, causal=True)
    _perturb(attention)
    x = torch.randn(3, 6, 16)
    q, k, v = attention.qkv(x).view(3, 6, 3, 4, 4).permute(2, 0, 3, 1, 4)
    want = F.scaled_dot_product_attention(Rotate(q), Rotate(k), v, is_causal=True)
    assert torch.allclose(attention(x), attention.mix(want.transpose(1, 2).reshape(3, 6, 16)), atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_causal_switch(causal):
    torch.manual_seed(5)
    net = TinyDenoiser(20, dim=16, heads=2, layers=2, causal=causal)
    _perturb(net)
    x = torch.randint(20, (2, 9))
    out = net(x)
    for s in (1, 4, 8):
        y = x.clone()
        y[:, s:] = (x[:, s:] + torch.randint(1, 20, (2, 9 - s))) % 20
        changed = (net(y)[:, :s] - out[:, :s]).abs().amax(-1)
        if causal:
            assert changed.max() < 1e-5
        else:
            assert (changed > 1e-6).all()


def test_position_matters_and_batches_are_independent():
    torch.manual_seed(6)
    net = TinyDenoiser(30, dim=16, heads=2, layers=2)
    _perturb(net)
    x = torch.randperm(30)[:8]
    perm = torch.randperm(8)
    assert not torch.allclose(net(x[perm]), net(x)[perm], atol=1e-4)    # not blind to order
    batch = torch.randint(30, (4, 8))
    other = torch.randint(30, (4, 8))
    other[0] = batch[0]
    assert torch.allclose(net(batch)[0], net(other)[0], atol=1e-5)
    assert torch.allclose(net(batch)[0], net(batch[0]), atol=1e-5)


def test_exported_and_documented():
    assert "TinyDenoiserCurve" in course.__all__ and course.TinyDenoiserCurve.__doc__
    for name in ("TinyDenoiser", "Rotate"):       # not in course/__init__: the module ships with 08 only
        assert name not in course.__all__ and getattr(course.tinydenoiser, name).__doc__
    assert "RoFormer" in course.tinydenoiser.__doc__


# ---- the shipped curve -------------------------------------------------------------------------------
def test_shipped_curve_is_small_and_plausible():
    path = Path(tinydenoiser_curve.__file__)
    assert path.suffix == ".py" and path.stat().st_size < 20_000          # the bundle carries course/*.py
    steps, loss = course.TinyDenoiserCurve()
    assert len(steps) == len(loss) >= 50 and steps == sorted(steps) and steps[-1] >= 1500
    assert loss[0] > 6.0 and loss[-1] < 5.4               # from near log(2002) = 7.6 to below 5.4
    assert abs(loss[-1] - tinydenoiser_curve.HELDOUT_LOSS_PER_TOKEN) < 0.3
    cut_steps, cut_loss = course.TinyDenoiserCurve(1000)
    assert cut_steps[-1] <= 1000 and cut_loss == loss[:len(cut_loss)]


def test_curve_plots_beside_a_students_curve():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = course.PlotLosses({"MyTransformer": [7.0] * 300, "TinyDenoiser": course.TinyDenoiserCurve(300)})
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["MyTransformer (window 100)", "TinyDenoiser"]
    assert list(ax.lines[1].get_xdata()) == course.TinyDenoiserCurve(300)[0]
    plt.close("all")


# ---- where students see it -----------------------------------------------------------------------------
def _cells(name: str) -> list[str]:
    nb = json.loads((ROOT / "solutions" / f"{name}.ipynb").read_text())
    return ["".join(c["source"]) for c in nb["cells"]]


def test_notebook_08_shows_tinydenoisers_code_as_it_is():
    source = Path(course.tinydenoiser.__file__).read_text()
    body = source[source.index("def Rotate("):].rstrip("\n")
    shown = [c for c in _cells("08_causal") if c.startswith("# What you built")]
    assert len(shown) == 1 and f"```python\n{body}\n```" in shown[0], \
        "notebook 08 must show course/tinydenoiser.py as it is: rerun the edit that copies it"


def test_notebook_07_plots_the_shipped_curve():
    assert any("TinyDenoiserCurve(len(story_losses))" in c for c in _cells("07_my_transformer"))
    student = json.loads((ROOT / "notebooks" / "07_my_transformer.ipynb").read_text())
    code = ["".join(c["source"]) for c in student["cells"] if c["cell_type"] == "code"]
    assert not any("TinyDenoiser(" in c or "Rotate(" in c or "course.tinydenoiser " in c
                   for c in _cells("07_my_transformer") + code), "07 needs course/tinydenoiser.py"


def test_notebook_08_imports_it_where_students_get_it():
    assert any("from course.tinydenoiser import" in c for c in _cells("08_causal"))
