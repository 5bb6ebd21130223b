"""01's plain answers about the two sentences: how often each word fills a position, and the
entropy of such frequencies."""
from __future__ import annotations

import math
from typing import Any

from course.handles import StudentError, number


def entropy(probabilities: list[float]) -> float:
    """-sum p log p (natural log), over the probabilities above zero."""
    return -sum(p * math.log(p) for p in probabilities if p > 0)


def sentence_word_frequencies() -> dict[str, float]:
    """How often each word of the two sentences fills one of their four positions."""
    from course import SENTENCES
    truth_: dict[str, float] = {}
    for sentence, prob in SENTENCES.items():
        for word in sentence.split():
            truth_[word] = truth_.get(word, 0) + prob / 4
    return truth_


def plausible_frequencies(frequencies: Any) -> list[float] | None:
    """The student's own word frequencies when they are a real attempt (a frequency above zero for
    each word of the sentences and no other word, adding up to one), else None."""
    from course import SENTENCES
    words = {w for sentence in SENTENCES for w in sentence.split()}
    try:
        if type(frequencies) is not dict or set(frequencies) != words:
            return None
        own = [number(p) for p in frequencies.values()]
    except (AttributeError, StudentError, TypeError, ValueError):
        return None
    return own if all(p > 0 for p in own) and abs(sum(own) - 1) < 1e-6 else None
