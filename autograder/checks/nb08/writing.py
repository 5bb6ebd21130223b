"""08's WriteLeftToRight, checked with pretend networks of the check's own: networks whose logits
the check chose, so that only a function that reads them the right way writes what they like.
A pretend network lives on the checking side; the student's function gets a stand-in whose calls
come back to it, and it keeps every input it was fed. One that only answers with fixed logits is
made on the student's side from the check's numbers (:func:`last_and_elsewhere`): a writer samples
hundreds of tokens from it, and a round trip per token would be most of 08's grading time.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn as nn

from course.handles import Handle, given
from course.stories import STORY_MASK, STORY_UNK, StoryTokens, story_vocab


class Pretend(nn.Module):
    """A pretend network: logits_of(tokens) are its logits; `fed` is what it was called on."""

    def __init__(self, logits_of: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.logits_of = logits_of
        self.fed: list[torch.Tensor] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.fed.append(x.clone())
        return self.logits_of(x)


def last_and_elsewhere(last: torch.Tensor, elsewhere: torch.Tensor) -> Handle:
    """Logits `last` at the last position and `elsewhere` at every other, whatever the tokens: made
    on the student's side (``course.serve.PretendLogits``), from these numbers, so that a writer
    asked for hundreds of tokens costs one request, not one round trip a token. (It keeps nothing
    of what it is fed: a check that reads what the writer fed its network uses :class:`Pretend`.)"""
    return given("serve.PretendLogits")(last, elsewhere)


def following(after: torch.Tensor) -> Pretend:
    """At every position, far ahead of all other tokens, after[the token at that position]."""
    def logits_of(x: torch.Tensor) -> torch.Tensor:
        logits = torch.full((*x.shape, len(story_vocab)), -10000.0)
        return logits.scatter_(-1, after[x].unsqueeze(-1), 30.0)
    return Pretend(logits_of)


def favour(tokens: list[int], values: list[float], base: float = -10000.0) -> torch.Tensor:
    """Logits `base`, but `values` for `tokens`."""
    logits = torch.full((len(story_vocab),), base)
    logits[torch.tensor(tokens)] = torch.tensor(values, dtype=torch.float)
    return logits


def some_words(n: int) -> list[int]:
    """n different ordinary words, drawn at random: only a function that reads the network's logits
    can know which ones the pretend network likes."""
    pool = torch.tensor([i for i, w in enumerate(story_vocab)
                         if w.isalpha() and i not in (STORY_MASK, STORY_UNK)])
    return pool[torch.randperm(len(pool))[:n]].tolist()


def story(text: Any) -> torch.Tensor:
    """The tokens of what WriteLeftToRight returned (it must be text)."""
    assert type(text) is str, "WriteLeftToRight should return the story as text (StoryText(x))"
    return StoryTokens(text)


def fractions(WriteLeftToRight: Any, net: Any, temperature: float, runs: int,
              tokens: tuple) -> list[float]:
    """How often each of `tokens` comes after "the" in `runs` stories of 32 tokens."""
    written: list[int] = []
    for _ in range(runs):
        written += story(WriteLeftToRight(net, "the", L=32, temperature=temperature))[1:].tolist()
    return [written.count(t) / max(len(written), 1) for t in tokens]
