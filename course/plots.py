"""The page's plots: loss curves, attention matrices, and the four-bar chart of sentences.

matplotlib is imported inside each function so that importing the course stays fast.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
import torch


def WindowAverage(values: Sequence[float] | np.ndarray, window: int = 100) -> np.ndarray:
    """Running mean over the last `window` values (shorter at the start, so nothing is dropped)."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return values
    total = np.cumsum(np.insert(values, 0, 0.0))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(0, ends - window)
    return (total[ends] - total[starts]) / (ends - starts)


def PlotLosses(curves: Mapping[str, Sequence[float] | tuple[Sequence[int], Sequence[float]]],
               lines: Mapping[str, float] | None = None,
               window: int = 100, log: bool = False, ylabel: str = "loss", ax=None):
    """One window-averaged curve per entry of `curves`, and a labelled horizontal line per `lines`.

    A curve is the list of losses of every step (it is averaged over `window` steps), or a pair
    (steps, losses) that is already averaged and is drawn as it is, such as TinyDenoiserCurve().

    Example: PlotLosses({"NoTalking": losses}, lines={"best possible (0.50)": 0.50}, log=True)
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    for name, values in curves.items():
        if isinstance(values, tuple) and len(values) == 2:        # (steps, already averaged losses)
            steps, losses = cast("tuple[Sequence[int], Sequence[float]]", values)
            ax.plot(list(steps), list(losses), label=name)
        else:
            averaged = WindowAverage(values, window)       # point n: the average up to step n
            ax.plot(np.arange(1, len(averaged) + 1), averaged, label=f"{name} (window {window})")
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
    """The four-bar chart: how many generated sentences were each of the four combinations.

    `counts` is what SentenceCounts returns. Sentences that are none of the four ("other", e.g.
    "the the is alive") get a fifth bar when there are any. The title gives the nonsense
    fraction with the course's one definition (the same as NonsenseFraction): every sentence that
    is not one of the two real ones, the two mixed ones and the others alike.
    """
    import matplotlib.pyplot as plt

    names = ["the cat is alive", "the box is empty", "the cat is empty", "the box is alive"]
    total = sum(counts.values())
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3))
    heights = [counts.get(n, 0) for n in names]
    colours = ["C0", "C0", "C3", "C3"]                 # sense in blue, nonsense in red
    if counts.get("other", 0):
        names, heights, colours = names + ["other"], heights + [counts["other"]], colours + ["C3"]
    ax.bar(names, heights, color=colours)
    ax.set_ylabel(f"count (of {total})")
    sense = counts.get("the cat is alive", 0) + counts.get("the box is empty", 0)
    nonsense = (total - sense) / max(total, 1)
    ax.set_title(title or f"nonsense (not one of the two real sentences): {nonsense:.1%}")
    return ax
