"""Training helpers shared by the solution notebooks and the benchmarks.

- `Quick()` / `Steps(full, quick=200, cpu=None)`: how many steps to train. Quick mode
  (COURSE_QUICK=1, set by `course solutions --quick` and CI) cuts every run to `quick` steps;
  `cpu` is the smaller count the page suggests when there is no GPU (1500 instead of 5000).
- `Seed(seed)`: seed Python's and torch's random numbers.
- `TrainLoop(net, make_batch, loss_fn, steps, lr=1e-3, scale=1.0, betas=(0.9, 0.999))`: Adam
  (PyTorch's default betas unless told otherwise) with a tqdm progress bar showing the running
  loss; batches are moved to the network's device.
- `SaveModel` / `LoadModel` / `TrainOrLoad`: keep trained weights in data_cache/ together
  with the settings they were trained with, and reuse them when the settings match.
  Set COURSE_RETRAIN=1 (or pass `retrain=True`) to train again anyway.
- `TrainStoryModel(net, causal, steps)`: the solutions' way of training on the stories
  (STORY_BATCH, STORY_L, STORY_ADAM: TrainLoop with lr=1e-3, betas=(0.9, 0.95), and scale=1/32 for
  the diffusion loss), with its weights kept in data_cache/.
"""
from __future__ import annotations

import json
import os
import pickle
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

import torch
import torch.nn as nn

QUICK_ENV = "COURSE_QUICK"
RETRAIN_ENV = "COURSE_RETRAIN"

_FALSE = ("", "0", "false", "False", "no")


def Quick() -> bool:
    """True when COURSE_QUICK=1 is set (CI and `course solutions --quick`)."""
    return os.environ.get(QUICK_ENV, "") not in _FALSE


def Steps(full: int, quick: int = 200, cpu: int | None = None, verbose: bool = False) -> int:
    """How many steps a training run takes.

    `full` normally; `cpu` instead when it is given and there is no GPU (the page: "5000 steps,
    or 1500 if you don't have a GPU"); at most `quick` in quick mode. With `verbose`, say why
    the count is not `full`.
    """
    from .nets import pick_device

    steps, why = full, ""
    if cpu is not None and pick_device() == "cpu":
        steps, why = cpu, f"no GPU here, so {cpu} steps instead of {full} (the page's suggestion for a CPU)"
    if Quick() and quick < steps:
        steps, why = quick, f"quick mode ({QUICK_ENV} is set), so {quick} steps instead of {full}"
    if verbose and why:
        print(f"Training for {steps} steps: {why}.")
    return steps


def Seed(seed: int = 0) -> None:
    """Seed Python's and torch's random numbers (on every device), so that a run can be repeated."""
    random.seed(seed)
    torch.manual_seed(seed)


def _net_device(net: nn.Module) -> torch.device:
    for p in net.parameters():
        return p.device
    return torch.device("cpu")


def TrainLoop(net: nn.Module, make_batch: Callable[[], torch.Tensor],
              loss_fn: Callable[[nn.Module, torch.Tensor], torch.Tensor], steps: int,
              lr: float = 1e-3, scale: float = 1.0, desc: str = "training",
              window: int = 100, progress: bool = True,
              betas: tuple[float, float] = (0.9, 0.999)) -> list[float]:
    """Adam on `loss_fn(net, make_batch())` for `steps` steps; returns loss.item() * scale per step.

    `betas` are Adam's: how fast it forgets the average gradient and the average squared gradient.

    Each batch is moved to the device the network lives on. A tqdm progress bar shows the
    loss averaged over the last `window` steps (`progress=False` hides it). The wall time of
    the run is left in `TrainLoop.last_seconds`.
    """
    from tqdm.auto import tqdm

    device = _net_device(net)
    opt = torch.optim.Adam(net.parameters(), lr=lr, betas=betas)
    losses: list[float] = []
    net.train()
    start = time.perf_counter()
    with tqdm(range(steps), desc=desc, mininterval=1.0, disable=not progress) as bar:
        for _ in bar:
            opt.zero_grad()
            loss = loss_fn(net, make_batch().to(device))
            loss.backward()
            opt.step()
            losses.append(loss.item() * scale)
            if len(losses) % 10 == 0 or len(losses) == steps:
                recent = losses[-window:]
                bar.set_postfix(loss=f"{sum(recent) / len(recent):.3f}", refresh=False)
    TrainLoop.last_seconds = time.perf_counter() - start  # type: ignore[attr-defined]  # a function attribute
    return losses


TrainLoop.last_seconds = 0.0  # type: ignore[attr-defined]  # mypy does not model attributes set on functions


def _same(a: object, b: object) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def SaveModel(net: nn.Module, path: str | Path, settings: dict,
              losses: list[float] | None = None) -> Path:
    """Save the weights with the settings they were trained with (and the loss curve), atomically.

    `settings` must be JSON-like (numbers, strings, lists, dicts): it is what LoadModel compares.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    json.dumps(settings)                       # fail now, not when loading, if it is not JSON-like
    state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
    tmp = path.with_suffix(path.suffix + ".part")
    torch.save({"state_dict": state, "settings": settings, "losses": list(losses or [])}, tmp)
    os.replace(tmp, path)
    return path


_UNREADABLE = (OSError, RuntimeError, EOFError, ValueError, pickle.UnpicklingError)


def SavedSettings(path: str | Path) -> dict | None:
    """The settings a saved model was trained with, or None if there is no readable file."""
    try:
        return torch.load(Path(path), map_location="cpu", weights_only=True).get("settings")
    except _UNREADABLE + (AttributeError,):
        return None


def LoadModel(net: nn.Module, path: str | Path, settings: dict) -> list[float] | None:
    """Load saved weights into `net` if they exist and were trained with the same settings.

    Returns the saved loss curve, or None (and leaves `net` untouched) if there is nothing to
    reuse: no file, an unreadable file, other settings, or weights that don't fit `net`.
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except _UNREADABLE:
        return None
    if not isinstance(saved, dict) or not _same(saved.get("settings"), settings):
        return None
    try:
        net.load_state_dict(saved["state_dict"])
    except (RuntimeError, KeyError):
        return None
    return list(saved.get("losses", []))


def Retrain() -> bool:
    """True when COURSE_RETRAIN=1 is set: train again even if matching saved weights exist."""
    return os.environ.get(RETRAIN_ENV, "") not in _FALSE


def TrainOrLoad(net: nn.Module, path: str | Path, settings: dict, train: Callable[[], list[float]],
                retrain: bool | None = None) -> list[float]:
    """Reuse the weights saved at `path` if they were trained with `settings`; else train and save.

    `train()` trains `net` in place and returns its losses. Nothing is asked interactively:
    matching weights are reused (and the notebook says so), anything else is trained again.
    Pass `retrain=True`, or set COURSE_RETRAIN=1, to train again even when they match.
    """
    path = Path(path)
    retrain = Retrain() if retrain is None else retrain
    if not retrain:
        losses = LoadModel(net, path, settings)
        if losses is not None:
            print(f"Reusing the weights in {path} (trained with the same settings). "
                  f"To train again, set {RETRAIN_ENV}=1 or pass retrain=True.")
            return losses
        if path.exists():
            print(f"{path} was trained with other settings ({SavedSettings(path)}); training again.")
    losses = train()
    SaveModel(net, path, settings, losses)
    print(f"Saved the trained weights and their settings to {path}.")
    return losses


# How the solutions (and benchmarks/stories.py) train on the stories: the page's batch of 64 windows
# of 32 tokens and Adam with lr 1e-3, except that Adam forgets old squared gradients faster
# (beta2 = 0.95 instead of 0.999, as language models are usually trained). With 0.999 the diffusion
# model sat on the word-frequency plateau for most of a 1500-step run (docs/numbers.md, "Stories").
STORY_BATCH, STORY_L = 64, 32


class _AdamSettings(TypedDict):
    lr: float
    betas: tuple[float, float]


STORY_ADAM: _AdamSettings = {"lr": 1e-3, "betas": (0.9, 0.95)}


def _fingerprint(items: list) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(items).encode()).hexdigest()[:16]


def WeightsFingerprint(net: nn.Module) -> str:
    """A short fingerprint of a network's numbers: equal for equal weights."""
    import hashlib

    digest = hashlib.sha256()
    for name, value in sorted(net.state_dict().items()):
        digest.update(name.encode())
        digest.update(value.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def StorySettings(net: nn.Module, causal: bool, steps: int, seed: int = 0,
                  start: nn.Module | None = None) -> dict:
    """What a stories model's saved weights are checked against before they are reused."""
    from . import stories

    shapes = [[name, list(p.shape)] for name, p in net.state_dict().items()]
    settings = {"model": type(net).__name__, "causal": causal,
                "loss": "NextTokenLoss" if causal else "DiffusionLoss", "steps": steps,
                "batch": STORY_BATCH, "L": STORY_L, "lr": STORY_ADAM["lr"],
                "betas": list(STORY_ADAM["betas"]), "seed": seed,
                "parameters": sum(p.numel() for p in net.parameters()),
                "shapes": _fingerprint(shapes), "vocab": _fingerprint(stories.story_vocab)}
    if start is not None:                     # trained on from another network's weights
        settings["start"] = {"model": type(start).__name__, "weights": WeightsFingerprint(start)}
    return settings


def TrainStoryModel(net: nn.Module, causal: bool, steps: int, seed: int = 0,
                    retrain: bool | None = None, name: str | None = None,
                    start: nn.Module | None = None) -> list[float]:
    """Train `net` on the stories, or reuse the weights saved by an earlier run with the same settings.

    Diffusion (causal=False): DiffusionLoss per token (divided by 32); left to right: NextTokenLoss.
    Both with TrainLoop(..., lr=1e-3, betas=(0.9, 0.95)) (STORY_ADAM) on GetBatch(64, 32).
    Weights and losses are kept in data_cache/story_<name>.pt; `name` is "diffusion" or "causal"
    by default, so notebook 08 reuses the diffusion model trained in 07. Give another `name` for
    another network (TinyDenoiser: "tinydenoiser") or another start. When `net` does not start
    fresh but from the weights of another network (copied into it before the call), pass that
    network as `start`: its weights' fingerprint becomes part of the settings, so that saved weights
    are only reused when they were trained on from the same start. Returns the loss per token of
    every step.
    """
    from . import stories
    from .data import cache_dir
    from .nets import NextTokenLoss
    from .two_sentences import DiffusionLoss

    if causal:
        loss_fn, scale = NextTokenLoss, 1.0
    else:
        def loss_fn(net: nn.Module, x_0: torch.Tensor) -> torch.Tensor:
            return DiffusionLoss(net, x_0, stories.STORY_MASK)
        scale = 1 / STORY_L
    name = name or ("causal" if causal else "diffusion")

    def train() -> list[float]:
        Seed(seed)
        return TrainLoop(net, lambda: stories.GetBatch(STORY_BATCH, STORY_L), loss_fn, steps,
                         scale=scale, desc=name, **STORY_ADAM)

    settings = StorySettings(net, causal, steps, seed, start)
    return TrainOrLoad(net, cache_dir() / f"story_{name}.pt", settings, train, retrain)
