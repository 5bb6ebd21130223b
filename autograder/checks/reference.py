"""Reference pieces: what the page's (and the chapter's) networks compute, written out here from
values the check set. Pure functions of the grader's own inputs, never of the student's outputs.
"""
from __future__ import annotations

from typing import Any

import torch


def word_logits(values: dict[str, torch.Tensor], x: torch.Tensor) -> Any:
    """WithPosition without its positions: out(embed[x])."""
    return values["embed.weight"][x] @ values["out.weight"].T + values.get("out.bias", 0)


def position_logits(values: dict[str, torch.Tensor], L: int) -> torch.Tensor:
    """What WithPosition's positions add to the logits of a sentence of length L: out.weight of
    the position vectors 0..L-1."""
    return values["position.weight"][:L] @ values["out.weight"].T
