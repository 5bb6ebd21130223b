"""Re-grading only what changed: ``course grade ... --cache`` keeps every row's result in
``OUT/cache/`` and reuses it when nothing it depends on changed.

An entry is keyed by the notebook's bytes (SHA-256) and its file name (a notebook can read its own
name), and records what its result depends on (:class:`autograder.provenance.Provenance`): the
notebook's SHA-256, the grader's version, the assignment's shared material, each automatically
graded question's tests, the run's limits and the sandbox mode. It is sealed (HMAC-SHA256, with
the key ``OUT/cache/.seal-key``). An entry whose seal, key, notebook or points do not check out
(edited by hand, moved under another notebook's key) is not used: its row is graded afresh and
the summary line names it.

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

from . import inputs, provenance
from .assignment import Assignment
from .provenance import Provenance
from .results import Result
from .status import GradingStatus

CACHE_DIR = "cache"
ENTRY = "entry.json"
FORMAT = 2
SHOWN = 10          # rejected entries named on the summary line


def keepable(r: Result) -> bool:
    """A row graded for what its notebook is (:attr:`autograder.status.Status.keepable`)."""
    return r.grading.kind.keepable


@dataclass
class Plan:
    reused: list[Result] = field(default_factory=list)
    partial: dict[str, list[str]] = field(default_factory=dict)     # row -> questions to test again
    fresh: int = 0
    entries: dict[str, dict] = field(default_factory=dict)           # row -> its entry (partial)
    rejected: list[tuple[str, str]] = field(default_factory=list)    # (row, why its entry was not used)

    def line(self, folder: Path) -> str:
        changed = sorted({q for qs in self.partial.values() for q in qs})
        text = (f"cache: reused {len(self.reused)} rows whole (not run), re-ran {len(self.partial)} "
                f"with only the changed questions' tests")
        if changed:
            text += f" ({', '.join(changed)})"
        text += f", graded {self.fresh} afresh ({folder})"
        if self.rejected:
            named = "; ".join(f"{row}: {why}" for row, why in self.rejected[:SHOWN])
            more = f"; and {len(self.rejected) - SHOWN} more" if len(self.rejected) > SHOWN else ""
            text += (f"\ncache: {len(self.rejected)} entries did not check out and were not used "
                     f"(graded afresh): {named}{more}")
        return text


class Cache:
    def __init__(self, folder: Path, asg: Assignment, options: dict) -> None:
        """``options``: the run's limits (timeout, cell_timeout, memory) and its sandbox ``mode``."""
        self.folder = folder
        self.asg = asg
        limits = {k: v for k, v in options.items() if k != "mode"}
        self.now = Provenance.of(asg, limits, str(options.get("mode", "")))
        self.secret = provenance.key(folder)

    @staticmethod
    def key(sha: str, sub: inputs.Submission) -> str:
        return hashlib.sha256(f"{sha}\0{sub.notebook_name}".encode("utf-8", "surrogatepass")).hexdigest()

    def _load(self, key: str) -> tuple[dict | None, str]:
        """(the entry's sealed body, "") or (None, why it cannot be used; "" when there is none)."""
        path = self.folder / key / ENTRY
        if not path.exists():
            return None, ""
        try:
            doc = json.loads(path.read_text(encoding="utf-8", errors="surrogatepass"))
        except (OSError, ValueError):
            return None, "its entry is not readable"
        if isinstance(doc, dict) and isinstance(doc.get("format"), int) and doc["format"] != FORMAT:
            return None, ""          # an older grader's entry: graded afresh, as after any new grader
        if not isinstance(doc, dict) or not isinstance(doc.get("body"), dict):
            return None, "its entry is not an entry of this grader"
        if not provenance.verify(self.secret, doc["body"], doc.get("seal")):
            return None, "its entry's seal does not match (changed since the grader wrote it)"
        return doc["body"], ""

    def check(self, body: dict, key: str, sha: str, sub: inputs.Submission) -> str:
        """Why a sealed entry is not this notebook's ("" when it is)."""
        from .shards import result_from_json
        if body.get("key") != key or body.get("sha256") != sha or body.get("notebook") != sub.notebook_name:
            return "its entry is another notebook's (its key, SHA-256 or name differ)"
        try:
            result = result_from_json(body["result"])
            Provenance.from_json(body["provenance"])
        except (KeyError, TypeError, ValueError, AttributeError):
            return "its entry is incomplete"
        if result.sha256 != sha:
            return f"its entry's result is of other bytes ({result.sha256[:12]} != {sha[:12]})"
        return provenance.implausible(result, self.asg) or ""

    def plan(self, subs: list[inputs.Submission], hashes: dict[str, str], out: Path) -> Plan:
        """Which rows are reused whole, which re-run with some questions' tests, which afresh."""
        from .shards import result_from_json
        plan = Plan()
        for s in subs:
            sha = hashes.get(s.file)
            if s.path is None or not sha:
                continue                      # not run anyway (its row comes from the input)
            key = self.key(sha, s)
            body, why = self._load(key)
            why = why or (self.check(body, key, sha, s) if body is not None else "")
            if why:
                plan.rejected.append((s.file, why))
            if body is None or why:
                plan.fresh += 1
                continue
            then, now = Provenance.from_json(body["provenance"]), self.now
            if (then.grader, then.setup, then.limits, then.mode) != \
                    (now.grader, now.setup, now.limits, now.mode):
                plan.fresh += 1               # a new grader, other limits or mode: graded afresh
                continue
            changed = then.changed_questions(self.now)
            status = body["result"]["status"]
            if not changed or GradingStatus.parse(status).kind.never_ran:
                r = result_from_json(self._restore(body, s, out))
                r.sha256 = sha
                if changed:          # never ran its tests: its cases are the new tests', not run
                    r.cases, r.question_points = self._not_run(s, status)
                plan.reused.append(r)
            elif body["result"]["tests_ran"]:
                plan.partial[s.file] = changed
                plan.entries[s.file] = body
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

    def _restore(self, body: dict, sub: inputs.Submission, out: Path) -> dict:
        """The entry's result for this row (its name and stem), its figures copied into ``out``."""
        old_stem = body["result"]["stem"]
        src = self.folder / body["key"] / "figures"
        if src.is_dir():
            shutil.copytree(src, out / "figures" / sub.stem, dirs_exist_ok=True)
        text = json.dumps(body["result"], ensure_ascii=False)
        old, new = (json.dumps(f"figures/{stem}/")[1:-1] for stem in (old_stem, sub.stem))
        text = text.replace(old, new)
        result = json.loads(text)
        result["file"], result["stem"] = sub.file, sub.stem
        return result

    def splice(self, r: Result, sub_file: str, plan: Plan) -> Result:
        """A row re-run with only its changed questions' tests: the other questions' cases and
        points from its entry (when the new run reached its tests; else the new row stands)."""
        body = plan.entries[sub_file]
        changed = set(plan.partial[sub_file])
        if not r.tests_ran:
            return r
        from .results import CaseResult
        old_cases = [CaseResult(**c) for c in body["result"]["cases"]]
        cases = []
        for q in self.asg.auto:
            if q.name in changed:
                cases += [c for c in r.cases if c.question == q.name]
            else:
                cases += [c for c in old_cases if c.question == q.name]
                r.question_points[q.name] = float(body["result"]["question_points"].get(q.name, 0.0))
        r.cases = cases
        return r

    def store(self, results: list[Result], subs: list[inputs.Submission], out: Path) -> int:
        """Every keepable row into the cache (its figures too), sealed; the number stored."""
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
            body = {"key": key, "notebook": s.notebook_name, "sha256": r.sha256,
                    "provenance": self.now.to_json(), "result": result_to_json(r)}
            doc = {"format": FORMAT, "seal": provenance.seal(self.secret, body), "body": body}
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
