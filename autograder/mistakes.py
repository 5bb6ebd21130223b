"""Named mistakes: the known wrong answers of a question, each with the words that name it.

Every mutant (``autograder/assignments/NN_name/mutants/<id>.py``, :mod:`autograder.mutants`) is a
known wrong (``expect: fail``) or right (``expect: pass``) answer. A wrong one whose header has a
``says:`` line is a *named mistake*: ``says`` ends the sentence "your <piece> behaves exactly like
one that ...". When a question's tests fail, the judge runs the student's piece and each named
mistake of that question on inputs of its own (:mod:`autograder.checks.mistakes`) and reports those
whose answers the student's match on every input. The feedback names them beside the failed tests;
points never change.

This module reads the files (text only: the grader's own process imports no torch); the judge runs
their code.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HEADER_KEYS = ("question", "expect", "replaces", "why", "hint", "says", "fails")
# the pieces a judge can run on its own inputs (autograder.checks.mistakes.PROBES has one for each)
PIECES = ("Attention", "Head", "MultiHead", "Block")
MAX_NAMED = 3                       # mistakes named for one question: more would say nothing


@dataclass(frozen=True)
class Mutant:
    """One mutant file: its header and its code."""

    notebook: str
    name: str
    question: str
    expect: str          # "fail" or "pass"
    replaces: str
    why: str
    code: str
    hint: str = ""
    says: str = ""       # for a named mistake: the end of "your <piece> behaves exactly like one that ..."
    fails: str = ""      # the only tests it may fail, comma-separated (one slip costs its points once)

    @property
    def named(self) -> bool:
        """Whether the judge names this mistake when a student's piece behaves like it."""
        return self.expect == "fail" and bool(self.says) and self.replaces in PIECES

    @property
    def sentence(self) -> str:
        """What the student reads."""
        return f"your {self.replaces} behaves exactly like one that {self.says}"


def read_mutant(path: Path) -> Mutant:
    """A mutant file: ``# key: value`` header lines (:data:`HEADER_KEYS`), then its code."""
    header: dict[str, str]
    body: list[str]
    header, body = {}, []
    for line in path.read_text(encoding="utf-8").splitlines():
        key = line[2:].split(":", 1)[0].strip() if line.startswith("# ") and ":" in line else None
        if not body and key in HEADER_KEYS:
            header[key] = line.split(":", 1)[1].strip()
        else:
            body.append(line)
    missing = {"question", "expect", "replaces"} - header.keys()
    if missing or header["expect"] not in ("pass", "fail"):
        raise ValueError(f"{path}: the header needs question, expect (pass/fail) and replaces")
    return Mutant(path.parent.parent.name, path.stem, header["question"], header["expect"],
                  header["replaces"], header.get("why", ""), "\n".join(body).strip() + "\n",
                  header.get("hint", ""), header.get("says", ""), header.get("fails", ""))


def catalogue(folder: Path) -> dict[str, list[Mutant]]:
    """By question (in file order): the named mistakes of an assignment's folder, and the known
    right answers of the pieces the judge runs (a student's piece that behaves like one is named
    nothing). A right answer named ``given_*`` changes a GIVEN piece on purpose, to show that the
    question's own piece keeps its points: it is no right answer of the piece it changes."""
    found: dict[str, list[Mutant]] = {}
    for path in sorted((folder / "mutants").glob("*.py")):
        m = read_mutant(path)
        if m.named or (m.expect == "pass" and m.replaces in PIECES and not m.name.startswith("given_")):
            found.setdefault(m.question, []).append(m)
    return {q: ms for q, ms in found.items() if any(m.named for m in ms)}


def pieces(question: list[Mutant]) -> list[str]:
    """The pieces the judge runs for a question, inner first (:data:`PIECES`' order): those of its
    named mistakes, and those with right answers before them (a piece is run only when every piece
    before it behaved like a right answer: a wrong inner piece would make its outer pieces look like
    another mistake)."""
    named = [PIECES.index(m.replaces) for m in question if m.named]
    known = {m.replaces for m in question}
    return [p for p in PIECES[:max(named) + 1] if p in known] if named else []


def payload(mutants: list[Mutant]) -> dict[str, list]:
    """What the judge gets for one question: the pieces to run in order, the named mistakes' code by
    id and the right answers'."""
    return {"pieces": pieces(mutants),
            "mistakes": [{"id": m.name, "piece": m.replaces, "code": m.code} for m in mutants if m.named],
            "right": [{"id": m.name, "piece": m.replaces, "code": m.code} for m in mutants if not m.named]}


@dataclass(frozen=True)
class Named:
    """A mistake named for one submission's question (``results/<file>.json``'s ``mistakes``)."""

    question: str
    id: str
    sentence: str

    def as_dict(self) -> dict[str, str]:
        return {"question": self.question, "id": self.id, "sentence": self.sentence}


def named(catalogue: dict[str, list[Mutant]], question: str, ids: object) -> list[Named]:
    """The judge's ids for ``question``, as named mistakes: only ids of the question's own catalogue,
    each once, at most :data:`MAX_NAMED` (the judge is trusted, but what it says is still data)."""
    known = {m.name: m for m in catalogue.get(question, []) if m.named}
    out: list[Named] = []
    for i in ids if isinstance(ids, list) else []:
        m = known.get(i) if isinstance(i, str) else None
        if m is not None and all(n.id != m.name for n in out):
            out.append(Named(question, m.name, m.sentence))
    return out[:MAX_NAMED]


def from_json(items: object) -> list[Named]:
    """``results/<file>.json``'s ``mistakes`` read back (a shard, the report, ``course mark``)."""
    out = []
    for d in items if isinstance(items, list) else []:
        if isinstance(d, dict) and all(isinstance(d.get(k), str) for k in ("question", "id", "sentence")):
            out.append(Named(d["question"], d["id"], d["sentence"]))
    return out
