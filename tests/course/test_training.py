
"""course.training: step counts, seeding, the training loop, and saving/reusing trained models."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn

import course.nets
from course import training
from course.training import (
    LoadModel,
    Quick,
    SavedSettings,
    SaveModel,
    Seed,
    Steps,
    TrainLoop,
    TrainOrLoad,
    TrainStoryModel,
)


@pytest.fixture(autouse=True)
def _no_flags(monkeypatch):
    monkeypatch.delenv("COURSE_QUICK", raising=False)
    monkeypatch.delenv("COURSE_RETRAIN", raising=False)


@pytest.mark.parametrize("value, quick", [("1", True), ("yes", True), ("0", False), ("", False),
                                          ("false", False)])
def test_quick_reads_the_environment(monkeypatch, value, quick):
    monkeypatch.setenv("COURSE_QUICK", value)
    assert Quick() is quick


def test_steps_full_quick_and_cpu(monkeypatch, capsys):
    monkeypatch.setattr(course.nets, "pick_device", lambda: "cuda")
    assert Steps(5000) == 5000
    assert Steps(5000, cpu=1500) == 5000                  # a GPU trains the page's full count
    monkeypatch.setattr(course.nets, "pick_device", lambda: "cpu")
    assert Steps(5000, cpu=1500) == 1500                  # the page's suggestion without a GPU
    assert Steps(5000, cpu=1500, verbose=True) == 1500
    assert "1500 steps instead of 5000" in capsys.readouterr().out
    monkeypatch.setenv("COURSE_QUICK", "1")
    assert Steps(5000, cpu=1500) == 200
    assert Steps(5000, quick=300) == 300
    assert Steps(100, quick=300) == 100                   # quick never adds steps
    Steps(1500, verbose=True)
    assert "quick mode" in capsys.readouterr().out


def test_seed_repeats_a_run():
    Seed(3)
    a = (torch.randn(5), torch.randint(10, (5,)))
    Seed(3)
    b = (torch.randn(5), torch.randint(10, (5,)))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def _problem(seed: int = 0):
    """A small regression that Adam solves in a few hundred steps."""
    torch.manual_seed(seed)
    true = torch.randn(4, 1)
    net = nn.Linear(4, 1, bias=False)

    def batch() -> torch.Tensor:
        x = torch.randn(32, 4)
        return torch.cat([x, x @ true], dim=1)

    def loss(net: nn.Module, xy: torch.Tensor) -> torch.Tensor:
        return ((net(xy[:, :4]) - xy[:, 4:]) ** 2).mean()

    return net, batch, loss


def test_trainloop_learns_and_returns_one_scaled_loss_per_step():
    net, batch, loss = _problem()
    losses = TrainLoop(net, batch, loss, steps=300, lr=3e-2, progress=False)
    assert len(losses) == 300
    assert sum(losses[-20:]) / 20 < 0.01 * sum(losses[:20]) / 20
    assert TrainLoop.last_seconds > 0

    net2, batch2, loss2 = _problem()
    Seed(0)
    scaled = TrainLoop(net2, batch2, loss2, steps=5, lr=3e-2, scale=0.5, progress=False)
    net3, batch3, loss3 = _problem()
    Seed(0)
    plain = TrainLoop(net3, batch3, loss3, steps=5, lr=3e-2, progress=False)
    assert scaled == pytest.approx([0.5 * x for x in plain])


def test_trainloop_is_repeatable_with_a_seed():
    runs = []
    for _ in range(2):
        net, batch, loss = _problem()
        Seed(7)
        runs.append(TrainLoop(net, batch, loss, steps=20, progress=False))
    assert runs[0] == runs[1]


def test_trainloop_is_adam_with_the_betas_it_is_given():
    def by_hand(betas):
        net, batch, loss = _problem()
        Seed(3)
        opt = torch.optim.Adam(net.parameters(), lr=1e-2, betas=betas)
        out = []
        for _ in range(30):
            opt.zero_grad()
            value = loss(net, batch())
            value.backward()
            opt.step()
            out.append(value.item())
        return out

    net, batch, loss = _problem()
    Seed(3)
    fast = TrainLoop(net, batch, loss, steps=30, lr=1e-2, betas=(0.9, 0.95), progress=False)
    assert fast == pytest.approx(by_hand((0.9, 0.95)), rel=1e-6)
    assert fast != pytest.approx(by_hand((0.9, 0.999)), rel=1e-6)


def test_trainloop_moves_batches_to_the_network(monkeypatch):
    seen = []
    net, batch, loss = _problem()

    def spy(net: nn.Module, xy: torch.Tensor) -> torch.Tensor:
        seen.append(xy.device)
        return loss(net, xy)
    TrainLoop(net, batch, spy, steps=2, progress=False)
    assert seen == [next(net.parameters()).device] * 2


def _settings(**change) -> dict:
    settings = {"model": "Linear", "steps": 10, "lr": 1e-3, "sizes": [4, 1]}
    settings.update(change)
    return settings


def test_save_and_load_round_trip(tmp_path):
    net = nn.Linear(4, 1)
    path = SaveModel(net, tmp_path / "sub" / "m.pt", _settings(), losses=[3.0, 2.0])
    assert path.exists() and not list(tmp_path.rglob("*.part"))
    assert SavedSettings(path) == _settings()
    other = nn.Linear(4, 1)
    assert LoadModel(other, path, _settings()) == [3.0, 2.0]
    assert torch.equal(other.weight, net.weight) and torch.equal(other.bias, net.bias)


@pytest.mark.parametrize("change", [{"steps": 11}, {"lr": 2e-3}, {"sizes": [4, 2]}, {"extra": 1}])
def test_load_refuses_other_settings_and_leaves_the_net_alone(tmp_path, change):
    path = SaveModel(nn.Linear(4, 1), tmp_path / "m.pt", _settings())
    other = nn.Linear(4, 1)
    before = other.weight.clone()
    settings = _settings(**change)
    if "extra" in change:
        settings = {**_settings(), "extra": 1}
    assert LoadModel(other, path, settings) is None
    assert torch.equal(other.weight, before)


def test_load_survives_missing_corrupt_and_misfitting_files(tmp_path):
    net = nn.Linear(4, 1)
    assert LoadModel(net, tmp_path / "none.pt", _settings()) is None
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a torch file")
    assert LoadModel(net, bad, _settings()) is None
    assert SavedSettings(bad) is None
    path = SaveModel(nn.Linear(5, 1), tmp_path / "m.pt", _settings())
    assert LoadModel(net, path, _settings()) is None          # same settings, other shapes


def test_save_refuses_settings_that_cannot_be_compared(tmp_path):
    with pytest.raises(TypeError):
        SaveModel(nn.Linear(2, 1), tmp_path / "m.pt", {"device": torch.device("cpu")})


def test_train_or_load_reuses_matching_weights_and_retrains_on_request(tmp_path, monkeypatch, capsys):
    path = tmp_path / "m.pt"
    calls = []

    def trainer(net: nn.Module):
        def train() -> list[float]:
            calls.append(1)
            with torch.no_grad():
                net.weight.fill_(len(calls))
            return [float(len(calls))]
        return train

    net = nn.Linear(3, 1)
    assert TrainOrLoad(net, path, _settings(), trainer(net)) == [1.0]
    assert "Saved" in capsys.readouterr().out

    again = nn.Linear(3, 1)                                  # same settings: reused, not trained
    assert TrainOrLoad(again, path, _settings(), trainer(again)) == [1.0]
    assert len(calls) == 1 and torch.all(again.weight == 1)
    assert "Reusing" in capsys.readouterr().out

    assert TrainOrLoad(again, path, _settings(steps=99), trainer(again)) == [2.0]   # other settings
    assert "other settings" in capsys.readouterr().out
    assert TrainOrLoad(again, path, _settings(steps=99), trainer(again), retrain=True) == [3.0]
    monkeypatch.setenv(training.RETRAIN_ENV, "1")
    assert TrainOrLoad(again, path, _settings(steps=99), trainer(again)) == [4.0]
    assert len(calls) == 4
    monkeypatch.delenv(training.RETRAIN_ENV)
    fresh = nn.Linear(3, 1)
    assert TrainOrLoad(fresh, path, _settings(steps=99), trainer(fresh)) == [4.0]
    assert torch.all(fresh.weight == 4)


@pytest.mark.parametrize("causal", [False, True])
def test_train_story_model_saves_then_reuses_for_the_same_settings(shared_stories, tmp_path, monkeypatch,
                                                                   causal, capsys):
    from benchmarks.reference import ReferenceNamespace

    monkeypatch.setenv("COURSE_DATA_CACHE", str(tmp_path))
    monkeypatch.delenv("COURSE_RETRAIN", raising=False)
    MyTransformer = ReferenceNamespace(causal=True)["MyTransformer"]

    def fresh():
        torch.manual_seed(1)
        return MyTransformer(len(shared_stories.story_vocab), dim=16, heads=2, layers=1, causal=causal)

    net = fresh()
    losses = TrainStoryModel(net, causal=causal, steps=3)
    assert len(losses) == 3 and all(math.isfinite(x) for x in losses)
    name = "story_causal.pt" if causal else "story_diffusion.pt"
    assert (tmp_path / name).exists() and SavedSettings(tmp_path / name)["causal"] == causal
    assert SavedSettings(tmp_path / name)["betas"] == [0.9, 0.95]

    again = fresh()
    assert TrainStoryModel(again, causal=causal, steps=3) == losses        # loaded, not trained
    pairs = zip(net.state_dict().values(), again.state_dict().values(), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)
    assert "Reusing" in capsys.readouterr().out

    other = fresh()
    assert len(TrainStoryModel(other, causal=causal, steps=2)) == 2       # other settings: trains
    smaller = MyTransformer(len(shared_stories.story_vocab), dim=8, heads=2, layers=1, causal=causal)
    assert len(TrainStoryModel(smaller, causal=causal, steps=2)) == 2     # other shapes: trains


def test_train_story_model_names_and_starts(shared_stories, tmp_path, monkeypatch):
    """Another network or another start gets its own file and settings: TinyDenoiser in 07, the causal
    model trained on as a diffusion model in 08."""
    from course.tinydenoiser import TinyDenoiser

    monkeypatch.setenv("COURSE_DATA_CACHE", str(tmp_path))
    V = len(shared_stories.story_vocab)
    torch.manual_seed(1)
    denoiser = TinyDenoiser(V, dim=16, heads=2, layers=1)
    TrainStoryModel(denoiser, causal=False, steps=2, name="tinydenoiser")
    assert (tmp_path / "story_tinydenoiser.pt").exists() and not (tmp_path / "story_diffusion.pt").exists()
    assert SavedSettings(tmp_path / "story_tinydenoiser.pt")["model"] == "TinyDenoiser"

    start = TinyDenoiser(V, dim=16, heads=2, layers=1, causal=True)
    net = TinyDenoiser(V, dim=16, heads=2, layers=1)
    net.load_state_dict(start.state_dict())
    losses = TrainStoryModel(net, causal=False, steps=2, name="from_causal", start=start)
    saved = SavedSettings(tmp_path / "story_from_causal.pt")
    assert saved["start"] == {"model": "TinyDenoiser", "weights": training.WeightsFingerprint(start)}
    again = TinyDenoiser(V, dim=16, heads=2, layers=1)
    assert TrainStoryModel(again, causal=False, steps=2, name="from_causal", start=start) == losses
    other_start = TinyDenoiser(V, dim=16, heads=2, layers=1, causal=True)          # other weights
    assert training.WeightsFingerprint(other_start) != training.WeightsFingerprint(start)
    fresh = TinyDenoiser(V, dim=16, heads=2, layers=1)
    TrainStoryModel(fresh, causal=False, steps=2, name="from_causal", start=other_start)
    assert SavedSettings(tmp_path / "story_from_causal.pt")["start"]["weights"] != saved["start"]["weights"]
