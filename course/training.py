"""Training helpers shared by the solution notebooks and benchmarks: step counts, seeding,
a progress-bar training loop, and saving/loading trained models with their settings."""
from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Callable

import torch
import torch.nn as nn

QUICK_ENV = "COURSE_QUICK"


def Quick() -> bool:
    """True when COURSE_QUICK=1 is set (CI and `course solutions --quick`)."""
    return os.environ.get(QUICK_ENV, "") not in ("", "0", "false", "False")


def Steps(full: int, quick: int = 200) -> int:
    """`full` training steps normally, `quick` steps in quick mode."""
    return min(full, quick) if Quick() else full


def Seed(seed: int = 0) -> None:
    """Seed Python's and torch's random numbers, so that a run can be repeated."""
    random.seed(seed)
    torch.manual_seed(seed)


def TrainLoop(net: nn.Module, make_batch: Callable[[], torch.Tensor],
              loss_fn: Callable[[nn.Module, torch.Tensor], torch.Tensor], steps: int,
              lr: float = 1e-3, scale: float = 1.0, desc: str = "training") -> list[float]:
    """Adam on `loss_fn(net, make_batch())` for `steps` steps; returns loss.item() * scale per step.

    A tqdm progress bar shows the running (last 100 steps) loss.
    """
    from tqdm.auto import tqdm

    opt = torch.optim.Adam(net.parameters(), lr=lr)
    losses: list[float] = []
    bar = tqdm(range(steps), desc=desc, mininterval=1.0)
    for _ in bar:
        opt.zero_grad()
        loss = loss_fn(net, make_batch())
        loss.backward()
        opt.step()
        losses.append(loss.item() * scale)
        if len(losses) % 25 == 0:
            recent = losses[-100:]
            bar.set_postfix(loss=f"{sum(recent) / len(recent):.3f}")
    return losses


def SaveModel(net: nn.Module, path: str | Path, settings: dict, losses: list[float] | None = None) -> Path:
    """Save the weights with the settings they were trained with (and the loss curve)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    torch.save({"state_dict": net.state_dict(), "settings": settings, "losses": losses or []}, tmp)
    os.replace(tmp, path)
    return path


def LoadModel(net: nn.Module, path: str | Path, settings: dict) -> list[float] | None:
    """Load saved weights into `net` if they exist and were trained with the same settings.

    Returns the saved loss curve, or None (and leaves `net` untouched) if there is nothing to reuse.
    """
    path = Path(path)
    if not path.exists():
        return None
    saved = torch.load(path, map_location="cpu", weights_only=True)
    if json.dumps(saved.get("settings"), sort_keys=True) != json.dumps(settings, sort_keys=True):
        return None
    net.load_state_dict(saved["state_dict"])
    return list(saved.get("losses", []))
