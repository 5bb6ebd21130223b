"""Similarity flags, scoring (see :mod:`autograder.similarity`): a pair's score from the
fingerprints it shares, the candidates of the index scored, each submission against the master, and
identical answers."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .similarity_fingerprints import Submission
from .similarity_index import PAIR_SHARED, QUESTION_SCORE, QUESTION_SHARED, Tokens, candidates

THRESHOLD = 0.6            # default flag threshold (whole notebook, or one large question)
IDENTICAL_MIN = 30         # fingerprints (the course's code left out) an identical answer has at least
IDENTICAL_MASTER = 0.95    # Jaccard of a notebook's fingerprints and the master's: "the master's answers"


@dataclass
class Flag:
    kind: str                     # "pair" or "master"
    a: Submission
    b: Submission
    score: float
    whole: float
    questions: list[tuple[str, float, int]]       # (question, score, shared fingerprints), best first
    shared: int
    identical: bool = False       # the same answers (byte for byte; against the master, its fingerprints)


def score(kind: str, a: Submission, b: Submission, sizes_a: dict[str, int], sizes_b: dict[str, int],
          shared: dict[str, int], threshold: float) -> Flag | None:
    """A pair's flag, or None. Its score: the share of both notebooks' fingerprints they have in
    common (Dice, all questions together); against the master, the share of the student's
    fingerprints that are the master's (the master answers every question). One large question
    alike enough (QUESTION_SCORE over QUESTION_SHARED fingerprints) flags on its own."""
    n = sum(shared.values())
    ta, tb = sum(sizes_a.values()), sum(sizes_b.values())
    if kind == "master":
        whole = n / ta if ta else 0.0
    else:
        whole = 2 * n / (ta + tb) if ta + tb else 0.0
    per = sorted(((q, 2 * m / (sizes_a.get(q, 0) + sizes_b.get(q, 0)), m) for q, m in shared.items() if m),
                 key=lambda x: (-x[1], x[0]))
    best = max([x for _q, x, m in per if m >= QUESTION_SHARED] + [0.0])
    result = max(whole, best if best >= QUESTION_SCORE else 0.0)
    if result < threshold or n < PAIR_SHARED:
        return None
    return Flag(kind, a, b, round(result, 4), round(whole, 4), [(q, round(x, 4), m) for q, x, m in per], n)


def shared_counts(tokens: Tokens, pairs: Any) -> Any:
    """How many fingerprints each pair (rows of ``pairs``, sorted by their first) shares, per
    question: one array of ``len(pairs)`` rows and a column per question."""
    import numpy as np
    nq = len(tokens.questions)
    out = np.zeros((len(pairs), nq), np.int64)
    mark = np.zeros(tokens.held.size, bool)
    firsts: np.ndarray | list[int]
    begin: np.ndarray | list[int]
    firsts, begin = np.unique(pairs[:, 0], return_index=True) if len(pairs) else ([], [])
    ends = [*list(begin[1:]), len(pairs)]
    for i, lo, hi in zip(np.asarray(firsts).tolist(), list(begin), ends, strict=True):
        mine = tokens.of(i)
        mark[mine] = True
        js = pairs[lo:hi, 1]
        lengths = tokens.start[js + 1] - tokens.start[js]
        offsets = np.repeat(tokens.start[js] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        theirs = tokens.flat[offsets + np.arange(int(lengths.sum()))]
        hit = mark[theirs]
        row = np.repeat(np.arange(js.size), lengths)[hit]
        out[lo:hi] = np.bincount(row * nq + tokens.question[theirs[hit]],
                                 minlength=js.size * nq).reshape(js.size, nq)
        mark[mine] = False
    return out


def pair_flags(subs: list[Submission], threshold: float, pairs: Any = None) -> list[Flag]:
    """The flagged pairs of classmates among ``pairs`` (default: the index's candidates): every
    candidate's counts at once, then :func:`score` for those that reach the threshold."""
    import numpy as np
    tokens = Tokens(subs)
    pairs = candidates(subs, tokens, threshold) if pairs is None else pairs
    if not len(pairs):
        return []
    shared = shared_counts(tokens, pairs)
    sizes = tokens.sizes.astype(np.float64)
    a, b = pairs[:, 0], pairs[:, 1]
    den = sizes[a] + sizes[b]
    per = np.divide(2 * shared, den, out=np.zeros_like(den), where=den > 0)
    best = np.where((shared >= QUESTION_SHARED) & (per >= QUESTION_SCORE), per, 0.0).max(axis=1)
    total = shared.sum(axis=1)
    both = den.sum(axis=1)
    whole = np.divide(2 * total, both, out=np.zeros_like(both), where=both > 0)
    hit = (np.maximum(whole, best) >= threshold - 1e-9) & (total >= max(PAIR_SHARED, 1))
    flags = []
    for row in np.flatnonzero(hit).tolist():
        i, j = int(a[row]), int(b[row])
        si, sj = subs[i], subs[j]
        counts = dict(zip(tokens.questions, shared[row].tolist(), strict=True))
        f = score("pair", si, sj, _sizes(si.versus_class), _sizes(sj.versus_class),
                  {q: counts[q] for q in set(si.versus_class) & set(sj.versus_class)}, threshold)
        if f:
            flags.append(f)
    return flags


def _sizes(hashes: dict[str, Any]) -> dict[str, int]:
    return {q: int(h.size) for q, h in hashes.items()}


def master_flags(subs: list[Submission], master: Submission, threshold: float) -> list[Flag]:
    """Each submission against the master: the share of its fingerprints that are the master's."""
    import numpy as np
    mine = master.versus_master
    flags = []
    for s in subs:
        shared = {q: int(np.intersect1d(h, mine[q], assume_unique=True).size)
                  for q, h in s.versus_master.items() if q in mine}
        f = score("master", s, master, _sizes(s.versus_master), _sizes(mine), shared, threshold)
        if f:
            flags.append(f)
    return flags


def _canonical(sub: Submission) -> str:
    """A submission's answer cells, each as written (line ends and trailing spaces aside), in a
    fixed order: two submissions with the same text gave byte-identical answers."""
    cells = [c for u in sub.units.values() for c in u.cells]
    return "\x00".join(sorted("\n".join(line.rstrip() for line in str(c["source"]).strip().splitlines())
                              for c in cells))


def _raw_size(sub: Submission) -> int:
    """How many fingerprints a submission has by question, the course's code left out but nothing else."""
    return sum(int(u.hashes.size) for u in sub.units.values())


def _like_master(s: Submission, master: Submission) -> bool:
    """Jaccard of the notebook's fingerprints and the master's (of the questions it answers) at
    least IDENTICAL_MASTER."""
    import numpy as np
    theirs = _raw_size(s)
    mine = sum(int(master.units[q].hashes.size) for q in s.units if q in master.units)
    both = sum(int(np.intersect1d(u.hashes, master.units[q].hashes, assume_unique=True).size)
               for q, u in s.units.items() if q in master.units)
    return theirs >= IDENTICAL_MIN and both >= IDENTICAL_MASTER * (theirs + mine - both)


def identical(subs: list[Submission], master: Submission | None, flags: list[Flag]) -> list[Flag]:
    """Byte-identical answers are always flagged, pair by pair, however many wrote them (the
    fingerprints of half the class count for nothing in the scores: seven identical notebooks of
    thirteen scored nothing); a notebook whose fingerprints are the master's (Jaccard at least
    IDENTICAL_MASTER, over the questions it answers) is flagged beside the master. Answers of
    fewer than IDENTICAL_MIN fingerprints (a line or two) are left to the scores."""
    def whole(a: Submission, b: Submission, size: int) -> Flag:
        qs = sorted({q for q in a.units} | {q for q in b.units})
        return Flag("master" if b is master else "pair", a, b, 1.0, 1.0,
                    [(q, 1.0, int(a.units[q].hashes.size) if q in a.units else 0) for q in qs], size, True)

    groups: dict[str, list[Submission]] = {}
    for s in subs:
        if _raw_size(s) >= IDENTICAL_MIN:
            groups.setdefault(_canonical(s), []).append(s)
    replaced = {(a.file, b.file) for g in groups.values() for i, a in enumerate(g) for b in g[i + 1:]}
    out = [f for f in flags if f.kind != "pair" or (f.a.file, f.b.file) not in replaced]
    out += [whole(a, b, _raw_size(a)) for g in groups.values() for i, a in enumerate(g) for b in g[i + 1:]]
    if master is not None:
        for s in subs:
            if _like_master(s, master):
                out = [f for f in out if (f.kind, f.a.file) != ("master", s.file)]
                out.append(whole(s, master, _raw_size(s)))
    return out
