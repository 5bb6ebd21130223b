"""Similarity flags, fingerprints (see :mod:`autograder.similarity`): each submission's answers by
question, normalised and winnowed (``copydetect``), kept as sorted arrays of hashes; what counts
against classmates and against the master."""
from __future__ import annotations

import bisect
import io
import os
from dataclasses import dataclass, field
from typing import Any

from .similarity_normalise import CourseNames, normalise

K = 20                     # k-gram length, in characters of normalised code
WINDOW = 4                 # winnowing window (a match of K + WINDOW - 1 characters is always found)
COMMON = 0.5               # a fingerprint in at least this share of the class's answers counts for nothing
COMMON_MIN = 4             # ... and in at least this many answers (small classes)
PARALLEL_MIN = 400         # submissions from which normalising is spread over the machine's cores
MAX_WORKERS = 8


@dataclass
class Unit:
    """One submission's answers to one question: the normalised text, where each of its lines came
    from, and its fingerprints (a sorted int64 array, the course's code left out)."""

    question: str
    cells: list[dict]
    text: str
    origins: list[tuple[int, int, int]]          # per normalised line: (cell, first line, last line)
    starts: list[int]                            # where each normalised line starts in text
    hashes: Any = None
    boilerplate: Any = None                      # the course's code's hashes (shared by every unit)
    pygments: bool = False

    def lines_at(self, slices: Any) -> set[tuple[int, int]]:
        """The original (cell, line) pairs under copydetect's slices of ``text``."""
        hit: set[tuple[int, int]] = set()
        for a, b in zip(slices[0], slices[1], strict=True):
            lo = bisect.bisect_right(self.starts, int(a)) - 1
            hi = bisect.bisect_right(self.starts, max(int(b) - 1, int(a))) - 1
            for n in range(max(lo, 0), max(hi, 0) + 1):
                cell, first, last = self.origins[n]
                hit |= {(cell, x) for x in range(first, last + 1)}
        return hit

    def fingerprint(self) -> Any:
        """copydetect's fingerprint of the unit, made again: the report needs it for a few flags
        only, and kept for every unit it was most of a large class's memory."""
        return fingerprint(self.text, self.boilerplate, pygments=self.pygments)


@dataclass
class Submission:
    file: str
    id: str
    units: dict[str, Unit]
    versus_master: dict[str, Any] = field(default_factory=dict)   # hashes that count vs the master
    versus_class: dict[str, Any] = field(default_factory=dict)    # ... and vs classmates


def fingerprint(text: str, boilerplate: Any = None, window: int = WINDOW, pygments: bool = False) -> Any:
    """copydetect's fingerprint of normalised text (already tokenised: no filter of its own; with
    ``pygments``, raw code through copydetect's own tokens, for comparison)."""
    from copydetect import CodeFingerprint
    return CodeFingerprint("answer.py", K, window, boilerplate=boilerplate, filter=pygments,
                           fp=io.StringIO(text))


def hash_array(hashes: Any) -> Any:
    import numpy as np
    return np.array(sorted(int(h) for h in hashes), dtype=np.int64)


def without(fp: Any, drop: set) -> Any:
    """The same fingerprint with the hashes in ``drop`` removed."""
    import copy
    if not drop & fp.hashes:
        return fp
    new = copy.copy(fp)
    new.hashes = fp.hashes - drop
    new.hash_idx = {h: i for h, i in fp.hash_idx.items() if h not in drop}
    return new


def _raw_lines(source: str) -> list[tuple[str, int, int]]:
    return [(line, i, i) for i, line in enumerate(source.splitlines(), 1) if line.strip()]


def _by_question(cells: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for c in cells:
        out.setdefault(str(c.get("question", "")), []).append(c)
    return out


class Fingerprinter:
    """Normalised units and their fingerprints, each distinct text done once (a class shares cells)."""

    def __init__(self, names: CourseNames, boilerplate: Any, pygments: bool = False) -> None:
        self.names = names
        self.boilerplate = boilerplate
        self.pygments = pygments          # copydetect's own tokens instead (benchmarks/similarity.py)
        self.lines: dict[str, list[tuple[str, int, int]]] = {}
        self.hashes: dict[str, Any] = {}

    def unit(self, question: str, cells: list[dict]) -> Unit:
        """One question's cells, in the order of their normalised text (moving cells changes nothing)."""
        lines, origins = [], []
        for c in cells:
            if c["source"] not in self.lines:
                src = c["source"]
                self.lines[src] = _raw_lines(src) if self.pygments else normalise(src, self.names)
        for c in sorted(cells, key=lambda c: "\n".join(t for t, _a, _b in self.lines[c["source"]])):
            for text, first, last in self.lines[c["source"]]:
                lines.append(text)
                origins.append((c["cell"], first, last))
        starts, pos = [], 0
        for line in lines:
            starts.append(pos)
            pos += len(line) + 1
        u = Unit(question, cells, "\n".join(lines), origins, starts, boilerplate=self.boilerplate,
                 pygments=self.pygments)
        if u.text not in self.hashes:
            self.hashes[u.text] = hash_array(fingerprint(u.text, self.boilerplate,
                                                         pygments=self.pygments).hashes)
        u.hashes = self.hashes[u.text]
        return u

    def submission(self, file: str, id_: str, cells: list[dict]) -> Submission:
        return Submission(file, id_, {q: self.unit(q, c) for q, c in _by_question(cells).items()})

    def all(self, rows: list[dict]) -> list[Submission]:
        """Every row's submission; a large class on all the machine's cores (forked workers: the
        same hash seed, so the same fingerprints as in one process)."""
        workers = min(MAX_WORKERS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1)
        jobs = [(str(r.get("file", "")), str(r.get("id", "")), r.get("answer_code") or []) for r in rows]
        if workers < 2 or len(jobs) < PARALLEL_MIN:
            return [self.submission(*job) for job in jobs]
        import multiprocessing
        try:
            context = multiprocessing.get_context("fork")
        except ValueError:
            return [self.submission(*job) for job in jobs]
        global _WORKER
        _WORKER = self
        try:
            with context.Pool(workers) as pool:
                subs = pool.map(_submission_job, jobs, chunksize=max(1, len(jobs) // (8 * workers)))
        finally:
            _WORKER = None
        for s in subs:                     # one array for all, not a copy per unit from each worker
            for u in s.units.values():
                u.boilerplate = self.boilerplate
        return subs


_WORKER: Fingerprinter | None = None


def _submission_job(job: tuple[str, str, list[dict]]) -> Submission:
    assert _WORKER is not None
    sub = _WORKER.submission(*job)
    for u in sub.units.values():
        u.boilerplate = None               # not sent back with every unit
    return sub


def class_hashes(subs: list[Submission], master: Submission | None, common: float = COMMON) -> None:
    """Fill each submission's ``versus_master`` (its hashes less those held by ``common`` of the
    class: the obvious way to write a short line) and ``versus_class`` (less the master's too)."""
    import numpy as np
    by_q: dict[str, list[Any]] = {}
    for s in subs:
        for q, u in s.units.items():
            by_q.setdefault(q, []).append(u.hashes)
    commons: dict[str, Any] = {}
    for q, arrays in by_q.items():
        values, counts = np.unique(np.concatenate(arrays), return_counts=True)
        commons[q] = values[counts >= max(COMMON_MIN, common * len(arrays))]
    master_hashes = {q: u.hashes for q, u in master.units.items()} if master else {}
    for s in [*subs, *([master] if master else [])]:
        for q, u in s.units.items():
            vm = _less(u.hashes, commons.get(q))
            s.versus_master[q], s.versus_class[q] = vm, _less(vm, master_hashes.get(q))


def _less(hashes: Any, drop: Any) -> Any:
    """``hashes`` without ``drop`` (sorted arrays); the same array when nothing goes."""
    import numpy as np
    if drop is None or not drop.size or not hashes.size:
        return hashes
    kept = hashes[~np.isin(hashes, drop, assume_unique=True)]
    return hashes if kept.size == hashes.size else kept
