"""The page's plots: loss curves, attention matrices, and the four-bar chart of sentences.

matplotlib is imported inside each function so that importing the course stays fast.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch


def WindowAverage(values: Sequence[float], window: int = 100) -> np.ndarray:
    """Running mean over the last `window` values (shorter at the start, so nothing is dropped)."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return values
    total = np.cumsum(np.insert(values, 0, 0.0))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(0, ends - window)
    return (total[ends] - total[starts]) / (ends - starts)


def PlotLosses(curves: Mapping[str, Sequence[float]], lines: Mapping[str, float] | None = None,
               window: int = 100, log: bool = False, ylabel: str = "loss", ax=None):
    """One window-averaged curve per entry of `curves`, and a labelled horizontal line per `lines`.

    Example: PlotLosses({"NoTalking": losses}, lines={"best possible (0.50)": 0.50}, log=True)
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for name, values in curves.items():
        ax.plot(WindowAverage(values, window), label=f"{name} (window {window})")
    for i, (name, y) in enumerate((lines or {}).items()):
        ax.axhline(y, color=f"C{len(curves) + i}", linestyle="--", linewidth=1, label=name)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("training step")
    ax.set_ylabel(ylabel)
    ax.legend()
    return ax


def PlotAttention(weights: torch.Tensor, words: Sequence[str] | str, title: str = "", ax=None):
    """An (L, L) matrix of attention weights, row i = how much site i listens to each site.

    `words` labels the ticks: a list of words, or a sentence that is split on spaces.
    """
    import matplotlib.pyplot as plt

    if isinstance(words, str):
        words = words.split()
    weights = torch.as_tensor(weights).detach().cpu()
    if ax is None:
        _, ax = plt.subplots(figsize=(3.5, 3.5))
    image = ax.matshow(weights, vmin=0, vmax=1)
    ax.set_xticks(range(len(words)), words, rotation=90)
    ax.set_yticks(range(len(words)), words)
    ax.set_xlabel("listens to site j")
    ax.set_ylabel("site i")
    if title:
        ax.set_title(title)
    return image


def PlotSentences(counts: Mapping[str, int], title: str = "", ax=None):
    """The four-bar chart: how many generated sentences were each of the four combinations."""
    import matplotlib.pyplot as plt

    names = ["the cat is alive", "the box is empty", "the cat is empty", "the box is alive"]
    total = sum(counts.values())
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3))
    colours = ["C0", "C0", "C3", "C3"]                 # sense in blue, nonsense in red
    ax.bar(names, [counts.get(n, 0) for n in names], color=colours)
    ax.set_ylabel(f"count (of {total})")
    nonsense = counts.get("the cat is empty", 0) + counts.get("the box is alive", 0)
    ax.set_title(title or f"nonsense: {nonsense / max(total, 1):.1%}")
    return ax
