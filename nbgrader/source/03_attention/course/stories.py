"""The stories: tokens, vocabulary and batches, with the page's tokenisation.

Nothing is loaded when this module is imported: the text is read (or downloaded) the first
time one of story_vocab, STORY_UNK, STORY_MASK, corpus is used.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

import torch

WORD = re.compile(r"[a-z']+|[.,!?\"]")
WORD_OR_MASK = re.compile(r"[a-z']+|[.,!?\"_]")
VOCAB_WORDS = 2000


def Words(raw: str) -> list[str]:
    """Lower-case words and punctuation; the end-of-story marker is dropped."""
    return WORD.findall(raw.lower().replace("<|endoftext|>", " "))


def MakeVocab(words: list[str], size: int = VOCAB_WORDS) -> list[str]:
    """The `size` most common words, then '<unk>' and the mask '_'."""
    return [w for w, n in Counter(words).most_common(size)] + ["<unk>", "_"]


@lru_cache(maxsize=1)
def _world() -> dict:
    from .data import load_text

    words = Words(load_text())
    vocab = MakeVocab(words)
    index = {w: i for i, w in enumerate(vocab)}
    unk = len(vocab) - 2
    return {
        "story_vocab": vocab,
        "STORY_UNK": unk,
        "STORY_MASK": len(vocab) - 1,
        "index": index,
        "corpus": torch.tensor([index.get(w, unk) for w in words]),
    }


def __getattr__(name: str):
    if name in ("story_vocab", "STORY_UNK", "STORY_MASK", "corpus"):
        return _world()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def StoryTokens(text: str) -> torch.Tensor:
    """Text -> tokens; unknown words become <unk> and '_' becomes the mask."""
    world = _world()
    index, unk = world["index"], world["STORY_UNK"]
    return torch.tensor([index.get(w, unk) for w in WORD_OR_MASK.findall(text.lower())],
                        dtype=torch.long)


def StoryText(x: torch.Tensor) -> str:
    """Tokens -> text, words separated by spaces."""
    vocab = _world()["story_vocab"]
    return " ".join(vocab[i] for i in x.tolist())


def GetBatch(batch: int = 64, L: int = 32) -> torch.Tensor:
    """`batch` random windows of L consecutive tokens of the corpus, shape (batch, L)."""
    corpus = _world()["corpus"]
    start = torch.randint(len(corpus) - L, (batch,))
    return torch.stack([corpus[s:s + L] for s in start])


def TextTokens(text: str) -> torch.Tensor:
    """All of a text (e.g. held-out stories) as one long tensor of tokens of this vocabulary."""
    world = _world()
    return torch.tensor([world["index"].get(w, world["STORY_UNK"]) for w in Words(text)])
