"""What a stored result was graded with, and a seal that says it was not changed since.

A result read back later (a cache entry, a shard's result) is used only when it records what it
depends on and that matches what grades now:

- the notebook's bytes (SHA-256), checked against the file;
- the grader's version (:func:`grader_version`: the bytes of the grading engine and of the course
  package the notebook imports);
- the assignment's shared material (:func:`setup_hash`) and each question's tests
  (:func:`question_hashes`);
- the run's limits (timeout, per-cell timeout, memory) and the sandbox mode.

Each stored document is sealed with HMAC-SHA256 under a key kept beside it in the output folder
(:func:`key`, a file only the grader's user may read, in a folder student code never sees:
:mod:`autograder.workspace` hides the output folder). A document edited by hand, moved under
another notebook's name, or written by another output folder's grader fails :func:`verify`.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import inputs
from .assignment import Assignment
from .results import Result

KEY_FILE = ".seal-key"
PACKAGE = Path(__file__).resolve().parent
COURSE = PACKAGE.parent / "course"


def digest(doc) -> str:
    return hashlib.sha256(canonical(doc)).hexdigest()


def canonical(doc) -> bytes:
    return json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass")


_VERSION: str | None = None


def grader_version() -> str:
    """The grading engine's and the course package's source bytes, hashed (not the assignments'
    material: each question's tests are hashed on their own). Read once per process."""
    global _VERSION
    if _VERSION is None:
        h = hashlib.sha256()
        for root in (PACKAGE, COURSE):
            for p in sorted(root.rglob("*.py")):
                if {"tests", "assignments", "__pycache__"} & set(p.relative_to(root).parts):
                    continue
                h.update(p.relative_to(root.parent).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
        _VERSION = h.hexdigest()
    return _VERSION


def setup_hash(asg: Assignment) -> str:
    """The assignment's material shared by its questions: name, questions and points, given code, checks."""
    return digest({"name": asg.name, "given": asg.given_code, "checks": asg.checks,
                   "questions": [[q.name, q.points, q.manual, q.all_or_nothing] for q in asg.questions]})


def question_hashes(asg: Assignment) -> dict[str, str]:
    """Each automatically graded question's tests, as the runner gets them."""
    return {t["question"]: digest(t) for t in asg.tests_payload()}


@dataclass(frozen=True)
class Provenance:
    """What every row of one grading run was graded with."""

    grader: str
    setup: str
    tests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, float] = field(default_factory=dict)
    mode: str = ""

    @classmethod
    def of(cls, asg: Assignment, limits: dict[str, float], mode: str) -> Provenance:
        return cls(grader=grader_version(), setup=setup_hash(asg), tests=question_hashes(asg),
                   limits={k: float(v) for k, v in limits.items()}, mode=mode)

    @classmethod
    def from_json(cls, doc: dict) -> Provenance:
        return cls(grader=str(doc["grader"]), setup=str(doc["setup"]), tests=dict(doc["tests"]),
                   limits={k: float(v) for k, v in doc["limits"].items()}, mode=str(doc["mode"]))

    def to_json(self) -> dict:
        return asdict(self)

    def changed_questions(self, now: Provenance) -> list[str]:
        return sorted(q for q, h in now.tests.items() if self.tests.get(q) != h)

    def differences(self, now: Provenance, with_mode: bool = True) -> list[str]:
        """What differs from ``now``, in words (empty: the same)."""
        found = []
        if self.grader != now.grader:
            found.append(f"grader version {self.grader[:12]} (this grader is {now.grader[:12]})")
        if self.setup != now.setup:
            found.append("the assignment's questions, points, given code or checks")
        changed = self.changed_questions(now) + sorted(set(self.tests) - set(now.tests))
        if changed:
            found.append("the tests of " + ", ".join(changed))
        if self.limits != now.limits:
            found.append("limits " + limits_text(self.limits) + " (now " + limits_text(now.limits) + ")")
        if with_mode and self.mode != now.mode:
            found.append(f"sandbox mode {self.mode} (now {now.mode})")
        return found


def limits_text(limits: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in sorted(limits.items()))


def content_hashes(subs: list[inputs.Submission]) -> dict[str, str]:
    """{row name: SHA-256 of the notebook's bytes as submitted} (rows with bytes to run only): what a
    stored row is checked against, and what a hand grade belongs to (``course manual`` keeps it in
    the output folder's ledger, ``course grade`` gives it back)."""
    found: dict[str, str] = {}
    for s in subs:
        if s.path is None:
            continue
        try:
            with open(s.path, "rb") as f:
                found[s.file] = hashlib.file_digest(f, "sha256").hexdigest()
        except OSError:
            continue
    return found


# ---------------------------------------------------------------- the seal

def key(folder: Path) -> bytes:
    """The folder's sealing key, made at first use (by whichever of several shards comes first: the
    key is written whole under a name of its own, then linked into place; a second one finds it)."""
    path = folder / KEY_FILE
    found = read_key(folder)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32) + "\n")
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    found = read_key(folder)
    if found is None:
        raise OSError(f"cannot read the sealing key {path}")
    return found


def read_key(folder: Path) -> bytes | None:
    try:
        text = (folder / KEY_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return bytes.fromhex(text) if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else None


def seal(secret: bytes, body: dict) -> str:
    """The body's HMAC-SHA256, over its JSON as it will be read back (keys as strings, tuples as lists)."""
    body = json.loads(json.dumps(body, ensure_ascii=False))
    return hmac.new(secret, canonical(body), hashlib.sha256).hexdigest()


def verify(secret: bytes | None, body: dict, sealed: object) -> bool:
    return secret is not None and isinstance(sealed, str) and hmac.compare_digest(seal(secret, body), sealed)


# ---------------------------------------------------------------- a row that cannot be right

def implausible(r: Result, asg: Assignment) -> str | None:
    """Why a stored row cannot be a grading of this assignment (points over a question's maximum,
    a case over its own, a question it does not have); None when it can."""
    questions = {q.name: q for q in asg.auto}
    for name, points in r.question_points.items():
        q = questions.get(name)
        if q is None:
            return f"points for {name}, which is not an automatically graded question"
        if not isinstance(points, (int, float)) or not 0 <= points <= q.max_points + 1e-9:
            return f"{name} has {points} points of its {q.max_points:g}"
    for c in r.cases:
        if c.question not in questions or not 0 <= c.points <= c.max_points + 1e-9:
            return f"case {c.question}/{c.name} has {c.points} points of its {c.max_points:g}"
    return None
