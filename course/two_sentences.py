"""The two-sentence world of the masked-diffusion page, and its diffusion tools.

A "sentence" is a tensor of 4 token indices. The world has exactly two sentences:
"the cat is alive" (probability 0.8) and "the box is empty" (probability 0.2).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch

vocab = ["the", "cat", "box", "is", "alive", "empty", "nobody", "knows", "if", "or",
         "until", "somebody", "looks", "_"]
MASK = 13  # the index of "_"

SENTENCES = {"the cat is alive": 0.8, "the box is empty": 0.2}

Guesser = Callable[[torch.Tensor], torch.Tensor]  # x_t (L,) -> probabilities (L, vocab_size)


def Encode(sentence: str) -> torch.Tensor:
    """'the cat is alive' -> tensor([0, 1, 3, 4])."""
    return torch.tensor([vocab.index(word) for word in sentence.split()])


def Decode(x: torch.Tensor) -> str:
    """tensor([0, 1, 3, 4]) -> 'the cat is alive'."""
    return " ".join(vocab[i] for i in x.tolist())


_SENTENCE_TOKENS = torch.stack([Encode(s) for s in SENTENCES])
_SENTENCE_PROBS = torch.tensor(list(SENTENCES.values()))


def SamplePInit() -> torch.Tensor:
    """One sentence drawn from the world: 'the cat is alive' 80% of the time, else 'the box is empty'."""
    return _SENTENCE_TOKENS[torch.multinomial(_SENTENCE_PROBS, 1)[0]].clone()


def GuessX0(x_t: torch.Tensor) -> torch.Tensor:
    """The exact guesser: for a partly masked sentence x_t (L,), return p(x_0^i = v | x_t), shape (L, vocab).

    Each sentence of the world that agrees with every unmasked token of x_t keeps its prior
    weight; the guess at each position is the weighted vote of those sentences.
    """
    shown = x_t != MASK
    agrees = (_SENTENCE_TOKENS[:, shown] == x_t[shown]).all(dim=1)
    weight = _SENTENCE_PROBS * agrees
    if weight.sum() == 0:            # e.g. "the box _ alive": no sentence fits, fall back on the prior
        weight = _SENTENCE_PROBS.clone()
    weight = weight / weight.sum()
    p = torch.zeros(len(x_t), len(vocab))
    for sentence, w in zip(_SENTENCE_TOKENS, weight, strict=False):
        p[torch.arange(len(x_t)), sentence] += w
    return p


def DiffusionLoss(net: Callable[[torch.Tensor], torch.Tensor], x_0: torch.Tensor, MASK: int,
                  T: int | None = None) -> torch.Tensor:
    """The masked-diffusion loss (T/t) * sum over masked positions of -log p, averaged over the batch.

    x_0 has shape (batch, L). For every sentence a time t is drawn uniformly from the T steps
    {1, ..., T} (T defaults to L) and a share t/T of its positions, chosen at random, is masked:
    exactly t of them when T = L. (If T does not divide evenly, the count t*L/T is rounded up or
    down at random, so that it is right on average.)

    Why exactly t, and not each position with probability t/T: both mask t positions on average,
    but with exactly t the weight T/t always multiplies exactly t terms, so a sentence's loss is
    L times the average cost of its masked words, and the loss of the best possible guesser is
    exactly the entropy of the data (0.50 on the two sentences; with the count left to chance it
    is 0.63). Leaving the count to chance also adds noise (with t = 1 a sentence pays T times the
    cost of however many words happened to be masked: none, one, two...), and on the stories that
    noise kept the network on the word-frequency plateau for longer (benchmarks/stories.py and
    docs/numbers.md, "Stories").
    """
    batch, L = x_0.shape
    T = L if T is None else T
    t = torch.randint(1, T + 1, (batch, 1), device=x_0.device)
    share = t * L / T                                           # how many to mask
    count = share.floor() + (torch.rand(batch, 1, device=x_0.device) < share - share.floor())
    rank = torch.rand(batch, L, device=x_0.device).argsort(dim=1).argsort(dim=1)  # random order
    masked = rank < count                                       # the first `count` in that order
    x_t = x_0.masked_fill(masked, MASK)
    logp = net(x_t).float().log_softmax(dim=-1)
    nll = -logp.gather(-1, x_0[..., None])[..., 0]                # (batch, L)
    return ((T / t) * (nll * masked).sum(dim=1, keepdim=True)).mean()


def _sample(p: torch.Tensor) -> torch.Tensor:
    return torch.multinomial(p, 1)[:, 0]


def Undiffuse(Guess: Guesser, T: int, L: int = 4, mask: int = MASK,
              start: torch.Tensor | None = None,
              pick: Callable[[torch.Tensor], torch.Tensor] = _sample) -> torch.Tensor:
    """Write a sentence of L tokens in T steps, starting from all masks (or from `start`).

    At step s (counting down from T to 1) each still-masked position is revealed with
    probability 1/s, so that everything is revealed after the last step; a revealed position
    gets a token drawn from the guess made at that step. Give `start` (a partly masked
    sentence) to keep some words fixed and fill in only the masks.
    """
    x = torch.full((L,), mask, dtype=torch.long) if start is None else start.clone()
    L = len(x)
    for s in range(T, 0, -1):
        still = x == mask
        reveal = still & (torch.rand(L) < 1 / s)
        if reveal.any():
            x[reveal] = pick(Guess(x))[reveal]
    return x


def UndiffuseGreedy(Guess: Guesser, T: int, L: int = 4, mask: int = MASK,
                    start: torch.Tensor | None = None) -> torch.Tensor:
    """Undiffuse, but every revealed position takes its most probable token."""
    return Undiffuse(Guess, T, L, mask, start, pick=lambda p: p.argmax(dim=-1))


def UndiffuseTemperature(Guess: Guesser, T: int, temperature: float = 1.0, L: int = 4,
                         mask: int = MASK, start: torch.Tensor | None = None) -> torch.Tensor:
    """Undiffuse with the guess sharpened (temperature < 1) or flattened (> 1): p -> p^(1/temperature)."""
    def pick(p: torch.Tensor) -> torch.Tensor:
        logp = p.clamp_min(1e-30).log() / temperature
        logp[p == 0] = -math.inf                    # forbidden stays forbidden at any temperature
        return _sample(logp.softmax(dim=-1))
    return Undiffuse(Guess, T, L, mask, start, pick=pick)


def SentenceCounts(sentences: list[torch.Tensor]) -> dict[str, int]:
    """Count the four sentences of the bar chart, and everything else under 'other'.

    Nonsense, in the whole course, is every sentence that is not one of the two real ones: the two
    mixed ones ("the cat is empty", "the box is alive") and the 'other' ones alike.
    """
    names = ["the cat is alive", "the box is empty", "the cat is empty", "the box is alive"]
    counts = dict.fromkeys(names, 0)
    counts["other"] = 0
    for x in sentences:
        text = Decode(x)
        counts[text if text in counts else "other"] += 1
    return counts


def NonsenseFraction(sentences: list[torch.Tensor]) -> float:
    """The fraction of nonsense: sentences that are not one of the two sentences of the world
    (the mixed ones, "the cat is empty" and "the box is alive", and anything else)."""
    good = sum(Decode(x) in SENTENCES for x in sentences)
    return 1 - good / len(sentences)
