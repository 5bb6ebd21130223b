"""Re-grading only what changed: ``course grade ... --cache`` keeps every row's result in
``OUT/cache/`` and reuses it when nothing it depends on changed.

An entry is keyed by the notebook's bytes (SHA-256) and its file name (a notebook can read its own
name), and records what its result depends on:

- the grader's version (:func:`grader_version`: the bytes of the grading engine and of the course
  package the notebook imports), the options that bound a run (timeout, per-cell timeout, memory)
  and the sandbox mode;
- the assignment's shared material (:func:`setup_hash`: its name, questions and points, the given
  code and the check cells a notebook must keep);
- each automatically graded question's test file (:func:`question_hashes`).

On a re-grade a row is

- **reused whole** (not run) when all of these are unchanged, or when only tests changed and the
  row's notebook never reached the tests for a reason the tests cannot change (another week's
  notebook, an unreadable one: its cases are the new tests', none run);
- **re-run with the changed questions' tests only** when only some questions' tests changed: the
  notebook runs again from the top (a submission is one process for all its questions), the judge
  runs only the changed questions' test cases, and the other questions' case results are taken from
  the entry (the judge re-seeds every random generator before each case, so a case's result does
  not depend on the cases run before it). When the new run does not reach its tests (a timeout, a
  crash), the new run's row stands as it is;
- **graded afresh** otherwise.

Only results that a new run would give again are kept: ``ok`` and the statuses a notebook's own
code decides (suspicious code, deleted check cells, ``sys.exit()``, tampering, another week's or an
unreadable notebook), never a timeout, a memory limit or a grading error (those run again, as a
re-grade on a quieter machine should). Hand grades are not in the cache: ``hand_grades.json`` is
never touched, and after grading they are given back as after any grading.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import inputs
from .assignment import Assignment
from .results import Result

CACHE_DIR = "cache"
ENTRY = "entry.json"
FORMAT = 1
PACKAGE = Path(__file__).resolve().parent
COURSE = PACKAGE.parent / "course"
KEEP_PREFIXES = ("ok", "suspicious code", "cells deleted", "sys.exit()", "tampering detected",
                 "wrong notebook", "unreadable notebook")
NEVER_RAN = ("wrong notebook", "unreadable notebook")


def _digest(doc) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode(
        "utf-8", "surrogatepass")).hexdigest()


def grader_version() -> str:
    """The grading engine's and the course package's source bytes, hashed (not the assignments'
    material: each question's tests are hashed on their own)."""
    h = hashlib.sha256()
    for root in (PACKAGE, COURSE):
        for p in sorted(root.rglob("*.py")):
            if {"tests", "assignments", "__pycache__"} & set(p.relative_to(root).parts):
                continue
            h.update(p.relative_to(root.parent).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def setup_hash(asg: Assignment) -> str:
    return _digest({"name": asg.name, "given": asg.given_code, "checks": asg.checks,
                    "questions": [[q.name, q.points, q.manual, q.all_or_nothing] for q in asg.questions]})


def question_hashes(asg: Assignment) -> dict[str, str]:
    return {t["question"]: _digest(t) for t in asg.tests_payload()}


def keepable(r: Result) -> bool:
    return r.status.startswith(KEEP_PREFIXES)


@dataclass
class Plan:
    reused: list[Result] = field(default_factory=list)
    partial: dict[str, list[str]] = field(default_factory=dict)     # row -> questions to test again
    fresh: int = 0
    entries: dict[str, dict] = field(default_factory=dict)           # row -> its entry (reused, partial)

    def line(self, folder: Path) -> str:
        changed = sorted({q for qs in self.partial.values() for q in qs})
        text = (f"cache: reused {len(self.reused)} rows whole (not run), re-ran {len(self.partial)} "
                f"with only the changed questions' tests")
        if changed:
            text += f" ({', '.join(changed)})"
        return text + f", graded {self.fresh} afresh ({folder})"


class Cache:
    def __init__(self, folder: Path, asg: Assignment, options: dict) -> None:
        self.folder = folder
        self.asg = asg
        self.base = _digest({"grader": grader_version(), "options": options, "setup": setup_hash(asg)})
        self.questions = question_hashes(asg)

    @staticmethod
    def key(sha: str, sub: inputs.Submission) -> str:
        return hashlib.sha256(f"{sha}\0{sub.notebook_name}".encode("utf-8", "surrogatepass")).hexdigest()

    def _load(self, key: str) -> dict | None:
        try:
            doc = json.loads((self.folder / key / ENTRY).read_text(encoding="utf-8", errors="surrogatepass"))
        except (OSError, ValueError):
            return None
        return doc if isinstance(doc, dict) and doc.get("format") == FORMAT else None

    def plan(self, subs: list[inputs.Submission], hashes: dict[str, str], out: Path) -> Plan:
        """Which rows are reused whole, which re-run with some questions' tests, which afresh."""
        from .shards import result_from_json
        plan = Plan()
        for s in subs:
            sha = hashes.get(s.file)
            if s.path is None or not sha:
                continue                      # not run anyway (its row comes from the input)
            doc = self._load(self.key(sha, s))
            if doc is None or doc["base"] != self.base:
                plan.fresh += 1
                continue
            changed = sorted(q for q, h in self.questions.items() if doc["questions"].get(q) != h)
            status = doc["result"]["status"]
            if not changed or status.startswith(NEVER_RAN):
                r = result_from_json(self._restore(doc, s, out))
                if changed:          # never ran its tests: its cases are the new tests', not run
                    r.cases, r.question_points = self._not_run(s, status)
                plan.reused.append(r)
            elif doc["result"]["tests_ran"]:
                plan.partial[s.file] = changed
                plan.entries[s.file] = doc
            else:
                plan.fresh += 1
        return plan

    def _not_run(self, sub: inputs.Submission, status: str) -> tuple[list, dict]:
        from . import verdict
        from .job import Job
        job = Job(index=-1, sub=sub, staging=Path())
        job.fatal = status
        fresh = verdict.result(job, self.asg, 0.0)
        return fresh.cases, fresh.question_points

    def _restore(self, doc: dict, sub: inputs.Submission, out: Path) -> dict:
        """The entry's result for this row (its name and stem), its figures copied into ``out``."""
        key = doc["key"]
        old_stem = doc["result"]["stem"]
        src = self.folder / key / "figures"
        if src.is_dir():
            shutil.copytree(src, out / "figures" / sub.stem, dirs_exist_ok=True)
        text = json.dumps(doc["result"], ensure_ascii=False)
        old, new = (json.dumps(f"figures/{stem}/")[1:-1] for stem in (old_stem, sub.stem))
        text = text.replace(old, new)
        result = json.loads(text)
        result["file"], result["stem"] = sub.file, sub.stem
        return result

    def splice(self, r: Result, sub_file: str, plan: Plan) -> Result:
        """A row re-run with only its changed questions' tests: the other questions' cases and
        points from its entry (when the new run reached its tests; else the new row stands)."""
        doc = plan.entries[sub_file]
        changed = set(plan.partial[sub_file])
        if not r.tests_ran:
            return r
        from .results import CaseResult
        old_cases = [CaseResult(**c) for c in doc["result"]["cases"]]
        cases = []
        for q in self.asg.auto:
            if q.name in changed:
                cases += [c for c in r.cases if c.question == q.name]
            else:
                cases += [c for c in old_cases if c.question == q.name]
                r.question_points[q.name] = float(doc["result"]["question_points"].get(q.name, 0.0))
        r.cases = cases
        return r

    def store(self, results: list[Result], subs: list[inputs.Submission], out: Path) -> int:
        """Every keepable row into the cache (its figures too); the number stored."""
        from .shards import result_to_json
        by_file = {s.file: s for s in subs}
        n = 0
        for r in results:
            s = by_file.get(r.file)
            if s is None or not r.sha256 or not keepable(r):
                continue
            key = self.key(r.sha256, s)
            dest = self.folder / key
            tmp = self.folder / f".{key}.{os.getpid()}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            figures = out / "figures" / r.stem
            if figures.is_dir():
                shutil.copytree(figures, tmp / "figures")
            doc = {"format": FORMAT, "key": key, "base": self.base, "questions": self.questions,
                   "result": result_to_json(r)}
            (tmp / ENTRY).write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8",
                                     errors="surrogatepass")
            shutil.rmtree(dest, ignore_errors=True)
            try:
                os.replace(tmp, dest)
            except OSError:               # another shard stored the same notebook at the same time
                shutil.rmtree(tmp, ignore_errors=True)
                continue
            n += 1
        return n
