"""Similarity flags, the index (see :mod:`autograder.similarity`): which pairs of submissions can
be flagged at all, from an inverted index of fingerprints to the submissions that hold them, as MOSS
does, instead of every pair of the class.

Two submissions are a candidate when they hold a fingerprint in common that is among the rarest
of each (*prefix filtering*: a flag needs a share of each one's fingerprints in common, so with
every submission's fingerprints in one order, rarest first, the first ones of each already meet;
:func:`_prefixes`). A fingerprint that more than ``INDEX_CAP`` submissions hold names no pair: it
is the obvious way to write a line, no evidence of copying between two of them (in a class of
``2 * INDEX_CAP`` or fewer the class's common fingerprints are gone already, so nothing changes
there). Only the candidates are scored (:mod:`autograder.similarity_scoring`)."""
from __future__ import annotations

from typing import Any

from .similarity_fingerprints import Submission

INDEX_CAP = 100            # a fingerprint held by more submissions than this names no pair
PAIR_SHARED = 5            # fingerprints any flagged pair shares at least
QUESTION_SHARED = 150      # fingerprints one question alone must share to flag a pair (~30 lines) ...
QUESTION_SCORE = 0.8       # ... at this score or more
BATCH_PAIRS = 4_000_000    # pairs made at once from the index (memory)


class Tokens:
    """Every submission's fingerprints that count against classmates (``versus_class``) as one
    array of token numbers, a fingerprint of one question being another token than the same hash of
    another: ``flat[start[i]:start[i + 1]]`` are submission i's, sorted; ``question[t]`` and
    ``held[t]`` (how many submissions hold it) per token."""

    def __init__(self, subs: list[Submission]) -> None:
        import numpy as np
        self.questions = sorted({q for s in subs for q in s.versus_class})
        qi = {q: n for n, q in enumerate(self.questions)}
        owners, qs, hashes, sizes = [], [], [], np.zeros((len(subs), len(self.questions)), np.int64)
        for i, s in enumerate(subs):
            for q, h in s.versus_class.items():
                sizes[i, qi[q]] = h.size
                owners.append(np.full(h.size, i, np.int64))
                qs.append(np.full(h.size, qi[q], np.int64))
                hashes.append(h)
        self.sizes = sizes
        owner = np.concatenate(owners) if owners else np.zeros(0, np.int64)
        q_of = np.concatenate(qs) if qs else np.zeros(0, np.int64)
        h = np.concatenate(hashes) if hashes else np.zeros(0, np.int64)
        order = np.lexsort((h, q_of))
        new = np.ones(order.size, bool)
        new[1:] = (h[order][1:] != h[order][:-1]) | (q_of[order][1:] != q_of[order][:-1])
        token = np.empty(order.size, np.int64)
        token[order] = np.cumsum(new) - 1
        self.question = q_of[order][new]
        self.held = np.bincount(token, minlength=int(new.sum()))
        by_owner = np.lexsort((token, owner))
        self.flat, self.owner = token[by_owner], owner[by_owner]
        self.start = np.searchsorted(self.owner, np.arange(len(subs) + 1))

    def of(self, i: int) -> Any:
        return self.flat[self.start[i]:self.start[i + 1]]


def _needed(size: Any, score: float, least: int) -> Any:
    """The fewest fingerprints in common with which a set of ``size`` can reach Dice ``score``
    (2m / (size + other) >= score with other >= m: m >= score * size / (2 - score)), and ``least``."""
    import numpy as np
    if score <= 0:
        return np.full_like(size, least)
    if score > 1:                                  # no Dice is over 1: nothing can be flagged
        return size + 1
    return np.maximum(least, np.ceil(score * size / (2 - score) - 1e-9).astype(np.int64))


def _prefixes(tokens: Tokens, threshold: float) -> tuple[Any, Any]:
    """(owner, token) of every submission's prefix entries: its rarest fingerprints, as many as a
    flag leaves out at most plus one, for the whole notebook (Dice ``threshold``) and, apart, for
    each question (QUESTION_SHARED in common at QUESTION_SCORE); question prefixes' tokens are
    numbered after the whole notebook's, so the two kinds never meet."""
    import numpy as np
    n_tokens = tokens.held.size
    # every submission's tokens rarest first (by holders, then number): one order for all
    rank = np.lexsort((tokens.flat, tokens.held[tokens.flat], tokens.owner))
    flat, owner = tokens.flat[rank], tokens.owner[rank]
    position = np.arange(flat.size) - tokens.start[owner]
    total = np.diff(tokens.start)
    keep_whole = position <= total[owner] - _needed(total, threshold, PAIR_SHARED)[owner]
    # within a question: the position among the submission's tokens of that question
    q = tokens.question[flat]
    by_q = np.lexsort((np.arange(flat.size), q, owner))
    q_sorted, o_sorted = q[by_q], owner[by_q]
    first = np.ones(by_q.size, bool)
    first[1:] = (q_sorted[1:] != q_sorted[:-1]) | (o_sorted[1:] != o_sorted[:-1])
    group_start = np.maximum.accumulate(np.where(first, np.arange(by_q.size), 0))
    q_position = np.empty(by_q.size, np.int64)
    q_position[by_q] = np.arange(by_q.size) - group_start
    size_q = tokens.sizes[owner, q]
    need_q = _needed(size_q, max(QUESTION_SCORE, threshold), QUESTION_SHARED)
    keep_q = q_position <= size_q - need_q
    common = tokens.held[flat] > INDEX_CAP
    whole = keep_whole & ~common
    question = keep_q & ~common
    return (np.concatenate([owner[whole], owner[question]]),
            np.concatenate([flat[whole], flat[question] + n_tokens]))


def candidates(subs: list[Submission], tokens: Tokens | None = None, threshold: float = 0.6) -> Any:
    """The pairs (i < j, an array of two columns) that share a prefix fingerprint: every pair
    :func:`autograder.similarity_scoring.score_pairs` can flag, but for fingerprints over INDEX_CAP."""
    import numpy as np
    tokens = tokens or Tokens(subs)
    owner, token = _prefixes(tokens, threshold)
    order = np.lexsort((owner, token))
    owner, token = owner[order], token[order]
    edge = np.flatnonzero(np.diff(token)) + 1
    starts = np.concatenate([[0], edge]).astype(np.int64)
    sizes = np.diff(np.concatenate([starts, [token.size]]))
    n = len(subs)
    found: list[Any] = [np.zeros(0, np.int64)]
    batch: list[Any] = []
    made = 0
    for d in np.unique(sizes[sizes > 1]).tolist():
        members = owner[starts[sizes == d][:, None] + np.arange(d)[None, :]]
        a, b = np.triu_indices(d, k=1)
        for rows in np.array_split(members, max(1, members.shape[0] * a.size // BATCH_PAIRS + 1)):
            batch.append(rows[:, a].ravel() * n + rows[:, b].ravel())
            made += batch[-1].size
            if made >= BATCH_PAIRS:
                found.append(np.unique(np.concatenate(batch)))
                batch, made = [], 0
    found.append(np.unique(np.concatenate(batch)) if batch else np.zeros(0, np.int64))
    pairs = np.unique(np.concatenate(found))
    return np.stack([pairs // n, pairs % n], axis=1)
