"""``course manual DIR FILLED.csv``: merge hand-graded points back into a ``course grade`` output.

``course grade`` writes the pages and the CSV to fill in (:mod:`autograder.handgrading`). This
command checks every number against its question's points, writes the points into ``grades.csv``
(the manual columns, ``manual_points_earned``, ``final_points_earned``), adds them and the comment
to each student's ``feedback/<stem>.md``, keeps them in the folder's ledger ``hand_grades.sqlite``,
and rewrites the LMS import: the gradebook given with ``--gradebook``, else the one the grading run
was given (``DIR/lms.json``, :func:`instructor.lms.remembered`). A blank cell leaves that grade (and
a blank comment that comment) as it was, so several people can fill in parts and merge in turn.

**All or nothing.** Everything is checked and computed first (the filled-in CSV, the gradebook and
its column); then every file is written to a temporary file beside it, then the ledger's change is
committed, and only then are the files renamed into place. On any mistake before the commit nothing
in DIR changes, the exit code is 1 (2 for a gradebook that cannot be filled in) and the message
says where the mistake is. A rename that fails after it (a file held by another program) leaves
the ledger, the source of truth, with the change, and the message names the files still as they
were and says to write them again with ``course mark DIR --export`` (:class:`StaleFiles`).

**The ledger** (``DIR/hand_grades.sqlite``, :mod:`instructor.ledger`) is never removed by ``course
grade``. Each hand grade in it belongs to a submission's content (SHA-256 of the notebook's bytes as
submitted, ``results/<stem>.json``'s ``sha256``), its row name and a question; a row's comment is
an entry whose question is ``""``. ``course mark`` grades into the same ledger (rubric items,
several TAs at once), so a CSV and the browser are two ways into one set of grades: a CSV cell
left as ``manual.csv`` was pre-filled is no change, and everything this command writes comes
from the ledger. ``course grade --out DIR`` into a folder with a ledger gives every hand grade
back to the row with the same content (:func:`reapply`) and lists, never drops, those whose
notebook changed since they were given. The ledger's change is committed once every file is
written beside its place, before they are renamed into place.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder import feedback, handgrading, outdir
from autograder.csvcells import (
    FORMULA_START,
    CsvRowError,
    cell_text,
    csv_text,
    file_key,
    read_spreadsheet,
    read_table,
    text_cell,
)
from autograder.inputs import lms_id
from autograder.report import grades_csv_bytes
from autograder.results import EXTRA_COLUMNS, NO_NAMES, num, student_id
from autograder.status import Status, kind_of

from . import handback, lms
from .gradescope_pdf import load_results
from .ledger import COMMENT, DB, Key, Ledger, LedgerError

MARKER = "<!-- graded by hand: written by course manual -->"
LEDGER = DB                      # the folder's hand-grade ledger (instructor.ledger)
WHO = "course manual"


class ManualError(ValueError):
    """A filled-in CSV that cannot be merged (nothing was written)."""


class StaleFiles(ManualError):
    """The ledger holds the change, but some files could not be renamed into place: they still hold
    what they held before (the message names them and how to write them again)."""


def _read_csv(path: Path) -> list[list[str]]:
    """A filled-in CSV as a person's spreadsheet saved it (:func:`csvcells.read_spreadsheet`)."""
    try:
        return read_spreadsheet(path.read_bytes())[0]
    except CsvRowError as exc:
        raise ManualError(f"{path.name} is {exc}") from None


def parse_points(text: str) -> float | None:
    """A number of points as a person types it (``1``, ``0.5``, ``0,5``); None when blank."""
    t = text.strip()
    if not t:
        return None
    if "," in t and "." not in t:
        t = t.replace(",", ".")
    v = float(t)                                          # ValueError for anything else
    if not math.isfinite(v):
        raise ValueError(t)
    return v


class Folder:
    """A ``course grade`` output folder as it is on disk: its questions, grades.csv, and each row's
    results file stem and content hash."""

    def __init__(self, out: Path) -> None:
        self.out = out                  # the names it writes: OUT's
        self.where = outdir.resolve(out)    # where it reads them: one grading, whatever swaps meanwhile
        try:
            self.spec = json.loads((self.where / "questions.json").read_text(encoding="utf-8"))
            grades = read_table(self.where / "grades.csv")
        except CsvRowError as exc:
            raise ManualError(str(exc)) from None
        except (OSError, ValueError) as exc:
            raise ManualError(f"{out} is not an output folder of course grade ({exc})") from None
        self.manual_qs = {q["name"]: float(q["points"]) for q in self.spec["questions"] if q["manual"]}
        self.header, self.body = grades[0], grades[1:]
        self.files = [cell_text(r[0]) for r in self.body]
        self.stems, self.shas, self.contents = read_results(self.where, list(self.manual_qs))
        self.status = {f: r[self.header.index("grading_status")] if "grading_status" in self.header else ""
                       for f, r in zip(self.files, self.body, strict=True)}

    def sha(self, i: int) -> str:
        return self.shas.get(self.files[i], "")

    def content(self, i: int, q: str) -> str:
        """Row ``i``'s answer to ``q`` as a content key (:func:`autograder.handgrading.content_key`)."""
        return self.contents.get(self.files[i], {}).get(q, "")

    def content_keys(self) -> dict[Key, str]:
        """Every row's answers as the ledger notes them: {(sha256, file, question): content key}."""
        return {(self.sha(i), f, q): self.content(i, q) for i, f in enumerate(self.files)
                for q in self.manual_qs if self.sha(i)}


def read_results(where: Path, questions: list[str]
                 ) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, str]]]:
    """A grading folder's results: {file: stem}, {file: sha256}, {file: {question: content key}}."""
    stems: dict[str, str] = {}
    shas: dict[str, str] = {}
    contents: dict[str, dict[str, str]] = {}
    for p in sorted((where / "results").glob("*.json")):
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
            file = doc["file"]
            stems[file] = p.stem
            shas[file] = str(doc.get("sha256") or "")
            answers = doc.get("manual_answers") or {}
            figures = [(int(f["cell"]), str(f["file"])) for f in doc.get("figures") or []]
            contents[file] = {q: handgrading.content_key(where, answers.get(q), figures) for q in questions}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return stems, shas, contents


def load_ledger(out: Path) -> dict[Key, dict]:
    """The ledger's hand grades and comments as {(sha256, file, question): entry}; {} when the
    folder has none (:meth:`instructor.ledger.Ledger.entries`)."""
    try:
        ledger = Ledger.existing(out)
    except LedgerError as exc:
        raise ManualError(str(exc)) from None
    if ledger is None:
        return {}
    try:
        return ledger.entries()
    finally:
        ledger.close()


ANSWER_CHANGED = "the answer changed since it was graded"
LATE = re.compile(r"(?i)[_\-\s]late(?=[_\-\s.]|$)")


def same_student(a: str, b: str) -> bool:
    """Are two row names one student's? The same LMS id (Canvas user id, Moodle participant id);
    for names without one, the same name but for a ``LATE`` mark. A copy of a graded notebook under
    another student's name is never that student's grade."""
    ia, ib = lms_id(a), lms_id(b)
    if ia is not None or ib is not None:
        return ia == ib
    return LATE.sub("", a) == LATE.sub("", b)


def match(folder: Folder, ledger: dict[Key, dict]
          ) -> tuple[dict[tuple[int, str], dict], list[tuple[str, Key]]]:
    """Which ledger entry applies to which (row, question): the row with the same content and
    name, else the one row of the same student (:func:`same_student`) with the same content
    (renamed: a late upload); and the entries not applied, each with why (an entry for a row and
    question that has a newer one is left out of both)."""
    i: int | None                           # a row's index (None: no row of that name)
    by_file = {f: i for i, f in enumerate(folder.files)}
    by_sha: dict[str, list[int]] = {}
    for i in range(len(folder.files)):
        if folder.sha(i):
            by_sha.setdefault(folder.sha(i), []).append(i)
    applied: dict[tuple[int, str], dict] = {}
    rest: list[Key] = []
    missed: list[tuple[str, Key]] = []
    for key, entry in sorted(ledger.items()):
        sha, file, q = key
        most = folder.manual_qs.get(q)
        if most is not None and "points" in entry and not 0 <= float(entry["points"]) <= most + 1e-9:
            missed.append((f"{q} is now worth {num(most)} points, not {num(float(entry['points']))}", key))
            continue                                                  # never exported over the maximum
        i = by_file.get(file)
        if i is not None and folder.sha(i) == sha and (q in folder.manual_qs or q == COMMENT):
            applied[(i, q)] = entry
        else:
            rest.append(key)
    waiting: list[Key] = []
    for key in rest:
        sha, file, q = key
        if q not in folder.manual_qs and q != COMMENT:
            missed.append(("the question is no longer graded by hand", key))
            continue
        copies = by_sha.get(sha, []) if sha else []
        same = [j for j in copies if same_student(folder.files[j], file)]
        if len(same) == 1 and (same[0], q) not in applied:
            applied[(same[0], q)] = ledger[key]                       # the same notebook, renamed
            continue
        waiting.append(key)
    # a re-upload: the grade follows the answer, not the file. The latest grade of an answer whose
    # content is unchanged comes back; a row's own comment speaks of the whole notebook, so it waits
    waiting.sort(key=lambda k: str(ledger[k].get("when", "")), reverse=True)
    for key in waiting:
        sha, file, q = key
        content = str(ledger[key].get("content") or "")
        if q == COMMENT or not content:
            continue
        i = by_file.get(file)
        rows = [i] if i is not None else [j for j in range(len(folder.files))
                                          if same_student(folder.files[j], file)]
        same = [j for j in rows if folder.content(j, q) == content]
        if len(same) == 1 and (same[0], q) not in applied:
            applied[(same[0], q)] = ledger[key]
    for key in waiting:
        sha, file, q = key
        if any(e is ledger[key] for e in applied.values()):
            continue
        copies = by_sha.get(sha, []) if sha else []
        same = [j for j in copies if same_student(folder.files[j], file)]
        i = by_file.get(file)
        if i is not None and (i, q) in applied:
            continue                                                  # graded again since
        if i is not None:
            was = str(ledger[key].get("content") or "")
            changed = q != COMMENT and bool(was) and folder.content(i, q) != was
            missed.append((ANSWER_CHANGED if changed
                           else "the notebook changed since it was graded", key))
        elif copies and not same:
            missed.append(("not in this run (its notebook is another student's row now: not given to them)",
                           key))
        else:
            missed.append(("not in this run", key))
    return applied, missed


def _comment(text: str) -> str:
    """A comment cell as typed, less the apostrophe :func:`text_cell` put before a formula character
    (a manual.csv that ``course grade`` pre-filled, :func:`prefill`)."""
    return text[1:] if text.startswith("'") and text[1:].startswith((*FORMULA_START, "'")) else text


@dataclass
class Stamp:
    """What a filled-in row says of when it was written: its notebook's SHA-256 (short) and the
    ledger's change number then (None where the CSV has no such column), and where it is."""

    sha: str | None
    since: int | None
    where: str


def _read_filled(folder: Folder, filled: Path
                 ) -> tuple[dict[int, dict[str, float]], dict[int, str], list[str], dict[int, Stamp]]:
    """The filled-in CSV checked: {row: {question: points}}, {row: comment}, notes, {row: its
    stamp}. ManualError with every mistake (the first 20) otherwise."""
    manual_qs, files = folder.manual_qs, folder.files
    try:
        rows = _read_csv(filled)
    except OSError as exc:
        raise ManualError(f"cannot read {filled}: {exc.strerror}") from None
    if not rows or "file" not in [c.strip() for c in rows[0]]:
        raise ManualError(f"{filled}: the first row must name the columns (file, id, "
                          f"{', '.join(manual_qs)}, comment)")
    cols = [c.strip() for c in rows[0]]
    qcols = {q: cols.index(q) for q in manual_qs if q in cols}
    if not qcols:
        raise ManualError(f"{filled} has no column for {', '.join(manual_qs)}")
    unknown = [c for c in cols if c and c not in ("file", "id", "comment", *handgrading.STAMPS, *manual_qs)]
    by_key = {file_key(f): i for i, f in enumerate(files)}
    by_name = {f: i for i, f in enumerate(files)}
    errors: list[str] = []
    updates: dict[int, dict[str, float]] = {}
    comments: dict[int, str] = {}
    seen: dict[str, int] = {}
    stamps: dict[int, Stamp] = {}
    for n, row in enumerate(rows[1:], 2):
        if not any(c.strip() for c in row):
            continue
        row = row + [""] * (len(cols) - len(row))
        cell = row[cols.index("file")]
        where = f"{filled.name} row {n} ({cell_text(cell)})"
        found = _find_row(row[cols.index("key")].strip() if "key" in cols else "", cell, by_key, by_name)
        if isinstance(found, str):
            errors.append(f"{where}: {found}")
            continue
        key = files[found]
        if key in seen:
            errors.append(f"{where}: the same file as row {seen[key]}")
            continue
        seen[key] = n
        sha = row[cols.index("sha256")].strip().lower() if "sha256" in cols else None
        since = row[cols.index("ledger")].strip() if "ledger" in cols else ""
        if since and not since.isdigit():
            errors.append(f"{where}: ledger = {since!r} is not the ledger's change number manual.csv had")
            continue
        stamps[found] = Stamp(sha or None, int(since) if since else None, where)
        for q, c in qcols.items():
            try:
                v = parse_points(row[c])
            except ValueError:
                errors.append(f"{where}: {q} = {row[c]!r} is not a number")
                continue
            if v is None:
                continue
            if not 0 <= v <= manual_qs[q] + 1e-9:
                errors.append(f"{where}: {q} = {row[c].strip()} is not between 0 and {num(manual_qs[q])}")
                continue
            updates.setdefault(found, {})[q] = v
        if "comment" in cols and row[cols.index("comment")].strip():
            comments[found] = _comment(row[cols.index("comment")].strip())
    if errors:
        more = f"\n(and {len(errors) - 20} more)" if len(errors) > 20 else ""
        raise ManualError("nothing merged:\n" + "\n".join(errors[:20]) + more)
    notes = []
    if unknown:
        notes.append(f"note: columns ignored: {', '.join(unknown)}")
    missing = [q for q in manual_qs if q not in qcols]
    if missing:
        notes.append(f"note: {filled.name} has no column for {', '.join(missing)}")
    return updates, comments, notes, stamps


def _stale(ledger: Ledger, folder: Folder, i: int, key: Key, stamp: Stamp | None, who: str,
           history: list[dict]) -> str | None:
    """Why a filled-in cell of row ``i`` (the answer ``key``) must not be merged, or None: its row's
    notebook was re-uploaded since the CSV was written, or someone else changed the answer (or a
    rubric item applied to it) since then (since ever, for a CSV without the ``ledger`` column)."""
    if stamp is not None and stamp.sha and not folder.sha(i).startswith(stamp.sha):
        return "the notebook was re-uploaded since this CSV was made: nobody has graded the new one here"
    by = ledger.changed_since(key, (stamp.since if stamp is not None else None) or 0, who, history)
    if by:
        last = by[-1]
        return (f"{key[2] or 'the comment'} was changed by {last['who']} at {last['at']} since this CSV "
                "was made")
    return None


class Plan:
    """What a merge or a re-apply will write: {path: bytes, or a temporary file already written
    beside it}, grades.csv's new rows, lines to print."""

    def __init__(self, out: Path, ledger: Ledger | None = None) -> None:
        self.out = out
        self.files: dict[Path, bytes | Path] = {}
        self.table: list[list[str]] = []
        self.lines: list[str] = []
        self.ledger = ledger            # its transaction is committed before the files are renamed

    def finish(self) -> None:
        """Every file written beside its place (a failure: nothing changed), then the ledger's change
        committed (the source of truth: every file can be written again from it), then every file
        renamed into place (a failure: :class:`StaleFiles`, naming those left as they were)."""
        try:
            with outdir.editing(self.out) as into:     # OUT's grading, changed as one
                temps = _stage(_into(self.files, self.out, into))
                try:
                    if self.ledger is not None:
                        self.ledger.commit()
                except BaseException:
                    for tmp, _path in temps:
                        tmp.unlink(missing_ok=True)
                    raise
                _rename(temps, self.out)
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove the temporary files of a plan that will not be written (or was: none is left), and
        roll the ledger's change back if it was not committed."""
        for data in self.files.values():
            if isinstance(data, Path):
                data.unlink(missing_ok=True)
        if self.ledger is not None:
            self.ledger.rollback()
            self.ledger.forget()
            self.ledger = None


def _apply(folder: Folder, ledger: dict[Key, dict], plan: Plan) -> tuple[int, list[tuple[str, Key]], int]:
    """grades.csv's rows and the feedback files with the ledger's hand grades in them (cells the
    ledger does not speak for stay as they are); returns (rows with every hand-graded question,
    the entries not applied, the grades applied)."""
    header, body, manual_qs = folder.header, [list(r) for r in folder.body], folder.manual_qs
    applied, missed = match(folder, ledger)
    comments: dict[int, str] = {}
    notes: dict[tuple[int, str], list[str]] = {}
    for (i, q), entry in applied.items():
        if q == COMMENT:
            comments[i] = str(entry.get("comment", ""))
        else:
            body[i][header.index(q)] = num(float(entry["points"]))
            notes[(i, q)] = [str(n) for n in entry.get("notes", [])]
    col = {name: header.index(name) for name in [*manual_qs, "total_points_earned", *EXTRA_COLUMNS]}
    complete = 0
    for row in body:
        got = [row[col[q]] for q in manual_qs]
        if all(g.strip() for g in got):
            earned = sum(float(g) for g in got)
            row[col["manual_points_earned"]] = num(earned)
            row[col["final_points_earned"]] = num(float(row[col["total_points_earned"]]) + earned)
            complete += 1
        else:
            row[col["manual_points_earned"]] = row[col["final_points_earned"]] = ""
    plan.table = [header, *body]
    plan.files[folder.out / "grades.csv"] = grades_csv_bytes(plan.table)     # as course grade writes it
    plan.files.update(_feedback(folder, body, comments, notes))
    given = {(folder.files[i], q): float(row[col[q]]) for i, row in enumerate(body) for q in manual_qs
             if row[col[q]].strip()}
    try:                                  # the pages name the students as the grading run did
        book, _column = lms.remembered(folder.out)
    except lms.GradebookError:
        book = None
    names = lms.student_names(book) if book is not None and book.exists() else NO_NAMES
    pages = handgrading.rewrite_pages(folder.where, folder.spec, load_results(folder.where), given, names,
                                      parts=folder.out)
    plan.files.update({folder.out / page.relative_to(folder.where): tmp for page, tmp in pages.items()})
    return complete, missed, sum(1 for (_i, q) in applied if q != COMMENT)


def merge_plan(out: Path, filled: Path, force: bool = False) -> Plan:
    """Everything a merge of ``filled`` writes, checked and computed; nothing written yet (the
    ledger's change waits in an open transaction for :meth:`Plan.finish`). A cell whose answer
    someone else changed since the CSV was written, or whose notebook was re-uploaded since, is
    refused (ManualError listing them all) unless ``force``."""
    folder = Folder(out)
    if not folder.manual_qs:
        raise ManualError(f"{folder.spec['assignment']} has no question graded by hand")
    updates, comments, notes, stamps = _read_filled(folder, filled)
    who = f"{WHO} ({filled.resolve()})"         # a change merged from this same file is no conflict
    try:
        ledger = Ledger(out)
    except LedgerError as exc:
        raise ManualError(str(exc)) from None
    plan = Plan(out, ledger)
    try:
        ledger.begin()
        ledger.note_contents(folder.content_keys())     # the answers graded now: a re-grade follows them
        baseline = ledger.baseline()
        current = ledger.entries()
        applied, _missed = match(folder, current)
        history = ledger.history()
        stale: list[str] = []
        n = 0
        for i, values in updates.items():
            for q, v in values.items():
                if baseline.get((folder.files[i], q)) == num(v):
                    continue                         # as manual.csv was pre-filled: not typed here
                key = _key(applied[(i, q)] if (i, q) in applied else (folder.sha(i), folder.files[i], q))
                now = ledger.grade(ledger.answer(key))
                if now is not None and abs(now - v) < 1e-9:
                    continue                         # what the ledger holds already
                why = None if force else _stale(ledger, folder, i, key, stamps.get(i), who, history)
                if why:
                    where = stamps[i].where if i in stamps else folder.files[i]
                    stale.append(f"{where}: {q} = {num(v)}: {why} (it is "
                                 f"{'not graded' if now is None else num(now)} now)")
                    continue
                n += ledger.set_points(key, v, who)
        for i, text in comments.items():
            key = _key(applied.get((i, COMMENT)) or (folder.sha(i), folder.files[i], COMMENT))
            if ledger.answer(key).comment == text:
                continue
            why = None if force else _stale(ledger, folder, i, key, stamps.get(i), who, history)
            if why:
                stale.append(f"{stamps[i].where if i in stamps else folder.files[i]}: comment: {why}")
                continue
            ledger.set_comment(key, text, who)
        if stale:
            more = f"\n(and {len(stale) - 20} more)" if len(stale) > 20 else ""
            raise ManualError("nothing merged: these cells are of answers that changed since the CSV "
                              "was made:\n" + "\n".join(stale[:20]) + more + "\nTake them out of the "
                              "CSV (or start from the manual.csv a re-grade writes), or merge with --force "
                              "to write over them.")
        # a folder merged before the ledger existed: what grades.csv holds stays where the ledger is silent
        complete, _missed, _n = _apply(folder, ledger.entries(), plan)
    except LedgerError as exc:
        plan.discard()
        raise ManualError(str(exc)) from None
    except BaseException:
        plan.discard()
        raise
    plan.lines = [f"merged {n} grades from {filled} into {out / 'grades.csv'}: "
                  f"{complete} of {len(folder.body)} rows have every hand-graded question "
                  f"({', '.join(folder.manual_qs)})",
                  f"the hand grades are kept in {out / LEDGER}: a re-grade into {out} gives them back",
                  *notes]
    return plan


def _previous_contents(out: Path, folder: Folder) -> dict[Key, str]:
    """The answers of OUT's grading as published, when the one read now is another (a re-grade
    writing its new grading): {(sha256, file, question): content key}; {} otherwise."""
    try:
        previous = out / os.readlink(out / outdir.CURRENT)
    except OSError:
        return {}
    if not previous.is_dir() or previous.resolve() == folder.where.resolve():
        return {}
    _stems, shas, contents = read_results(previous, list(folder.manual_qs))
    return {(shas[f], f, q): k for f, keys in contents.items() for q, k in keys.items() if shas.get(f)}


def _key(entry: dict | Key) -> Key:
    """The ledger's key of an entry :func:`match` applied (or a key already)."""
    if isinstance(entry, tuple):
        return entry
    return (str(entry["sha256"]), str(entry["file"]), str(entry["question"]))


def reapply_plan(out: Path, exported: bool = False) -> Plan | None:
    """After a re-grade: the ledger's hand grades given back to the rows with the same content;
    None when the folder has no ledger (``exported``: an export, not a re-grade, says so)."""
    try:
        book = Ledger.existing(out)
    except LedgerError as exc:
        raise ManualError(str(exc)) from None
    if book is None:
        return None
    try:
        folder = Folder(out)
        # the grading being replaced first: what the hand grades were given to, for a ledger whose
        # answers were never noted (made before it noted them); then this grading's answers
        book.note_contents(_previous_contents(out, folder))
        book.note_contents(folder.content_keys())
        ledger = book.entries()
    finally:
        book.close()
    if not ledger:
        return None
    plan = Plan(out)
    _complete, missed, n = _apply(folder, ledger, plan)
    applied, _ = match(folder, ledger)
    who = {lms_id(folder.files[i]) or folder.files[i] for (i, q) in applied if q != COMMENT}
    n_comments = sum(1 for (_i, q) in applied if q == COMMENT)
    line = f"{'wrote' if exported else 'kept'} {n} hand grades of {len(who)} students"
    if n_comments:
        line += f" and {n_comments} comments"
    line += f" ({out / LEDGER})"
    renamed = sorted({(str(e["file"]), folder.files[i]) for (i, _q), e in applied.items()
                      if e["file"] != folder.files[i]})
    if renamed:
        line += "; given to a renamed row of the same student: " + ", ".join(
            f"{old} -> {new}" for old, new in renamed)
    # the answers of re-uploaded notebooks: a grade follows an answer whose content is unchanged
    carried = sum(1 for (i, q), e in applied.items() if q != COMMENT and e["sha256"] != folder.sha(i))
    changed = sum(1 for why, _key in missed if why == ANSWER_CHANGED)
    if carried or changed:
        line += (f"; kept {carried} hand grades of {carried} answers whose content is unchanged; "
                 f"{changed} answers changed and wait for a hand grade")
    if missed:
        reasons: dict[str, list[str]] = {}
        for why, (_sha, file, q) in missed:
            reasons.setdefault(why, []).append(f"{file} {q or 'comment'}")
        line += f"; {len(missed)} not applied (still in the ledger): " + "; ".join(
            f"{why}: {', '.join(items)}" for why, items in reasons.items())
    plan.lines = [line]
    return plan


PREFILLED = handgrading.PREFILLED     # the SHA-256 of a manual.csv as prefill wrote it


def prefill(out: Path) -> list[str]:
    """After a re-grade: ``manual.csv`` written again with the hand grades and comments the ledger
    gave back (the rows whose notebook changed stay blank), so that the next TA starts from them.
    Its SHA-256 is kept beside it: a later ``course grade`` removes it when nobody changed it
    (:func:`autograder.handgrading.set_aside_filled`), since the ledger holds all of it."""
    entries = load_ledger(out)
    if not entries or not (outdir.resolve(out) / "manual.csv").exists():
        return []
    folder = Folder(out)
    applied, _missed = match(folder, entries)
    qs = list(folder.manual_qs)
    ledger = Ledger(out)
    try:
        with ledger.transaction():
            since = str(ledger.last_change())
            rows = [["file", "id", *qs, "comment", *handgrading.STAMPS]]
            for i in sorted(range(len(folder.files)), key=lambda i: folder.files[i]):
                entry = applied.get((i, COMMENT))
                comment = str(entry.get("comment", "")) if entry else ""
                rows.append([text_cell(folder.files[i]), student_id(folder.files[i]),
                             *[num(float(applied[(i, q)]["points"])) if (i, q) in applied else ""
                               for q in qs],
                             text_cell(comment), file_key(folder.files[i]), folder.sha(i)[:16], since])
            data = csv_text(rows).encode("utf-8")
            ledger.set_baseline({(folder.files[i], q): num(float(applied[(i, q)]["points"]))
                                 for (i, q) in applied if q != COMMENT})
            write_all({out / "manual.csv": data,
                       out / PREFILLED: (hashlib.sha256(data).hexdigest() + "\n").encode("ascii")}, out)
    finally:
        ledger.close()
    n = sum(1 for (_i, q) in applied if q != COMMENT)
    return [f"{out / 'manual.csv'} holds the {n} hand grades given back: fill in the rest"]


def _stage(files: dict[Path, bytes | Path]) -> list[tuple[Path, Path]]:
    """Every file to a temporary file beside it (a value that is a path is that temporary file,
    already written): [(temporary, path)]. A failure removes them and leaves every file as it was."""
    temps: list[tuple[Path, Path]] = []
    try:
        for path, data in files.items():
            if isinstance(data, Path):
                temps.append((data, path))
                continue
            tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
            temps.append((tmp, path))
            tmp.write_bytes(data)
    except OSError as exc:
        for tmp, _path in temps:
            tmp.unlink(missing_ok=True)
        raise ManualError(f"cannot write {exc.filename}: {exc.strerror}") from None
    return temps


def _rename(temps: list[tuple[Path, Path]], out: Path) -> None:
    """Each temporary file renamed into place; on a failure, :class:`StaleFiles` naming the files
    that were not (those renamed already hold the new content)."""
    for k, (tmp, path) in enumerate(temps):
        try:
            os.replace(tmp, path)
        except OSError as exc:
            for left, _path in temps[k:]:
                left.unlink(missing_ok=True)
            stale = ", ".join(str(p.relative_to(out)) if p.is_relative_to(out) else str(p)
                              for _t, p in temps[k:])
            raise StaleFiles(
                f"cannot write {path}: {exc.strerror}. The hand grades are saved in {out / LEDGER}, "
                f"and {k} of {len(temps)} files were written; these still hold what they held before: "
                f"{stale}. Write them again from the ledger with `course mark {out} --export` once "
                f"{path.name} can be written.") from None


def write_all(files: dict[Path, bytes | Path], out: Path) -> None:
    """Every file to a temporary file beside it first; only when all are written, each renamed
    into place (:func:`_stage`, :func:`_rename`), OUT's grading changed as one
    (:func:`autograder.outdir.editing`)."""
    with outdir.editing(out) as into:
        _rename(_stage(_into(files, out, into)), out)


def _into(files: dict[Path, bytes | Path], out: Path, into: Path) -> dict[Path, bytes | Path]:
    """``files``, named as OUT's, renamed to where they are written (``into``: OUT's grading being
    changed; ``out`` itself in a folder of the older layout)."""
    if into == out:
        return files
    return {into / path.relative_to(out): data for path, data in files.items()}


def merge(out: Path, filled: Path) -> list[str]:
    """Merge a filled-in CSV into ``out`` (see the module's docstring); the lines to print."""
    plan = merge_plan(out, filled)
    plan.finish()
    return plan.lines


def reapply(out: Path) -> list[str]:
    """``course grade`` into a folder with a ledger: give its hand grades back; the lines to print."""
    plan = reapply_plan(out)
    if plan is None:
        return []
    plan.finish()
    return plan.lines


def _find_row(key: str, cell: str, by_key: dict[str, int], by_name: dict[str, int]) -> int | str:
    """The grades.csv row a filled-in row is about: by its key where it has one, else by its file
    cell as written (or as a spreadsheet that dropped the leading apostrophe left it); a string
    saying why not otherwise."""
    if key:
        return by_key[key] if key in by_key else f"no row in grades.csv has the key {key!r}"
    for name in dict.fromkeys((cell_text(cell), cell)):
        if name in by_name:
            return by_name[name]
    return "no such row in grades.csv"


TOTAL = "**Total: "                # the feedback's line of the final total (autograder.feedback)


def _feedback(folder: Folder, body: list[list[str]], comments: dict[int, str],
              notes: dict[tuple[int, str], list[str]] | None = None) -> dict[Path, bytes]:
    """Each student's feedback with (a new) section holding the hand-graded points and the comment,
    and, once every hand-graded question has its points, the final total under the title; rendered
    again as ``feedback/<stem>.html``. Another week's notebook keeps its feedback as it is (it was
    not run, nothing more)."""
    out, manual_qs, header = folder.out, folder.manual_qs, folder.header
    auto_max = float(folder.spec.get("auto_points", 0.0))
    files: dict[Path, bytes] = {}
    for i, row in enumerate(body):
        stem = folder.stems.get(cell_text(row[0]))
        path = out / "feedback" / f"{stem}.md"
        status = cell_text(folder.status.get(folder.files[i], ""))
        if (stem is None or not (folder.where / path.relative_to(out)).exists()
                or kind_of(status) is Status.WRONG_NOTEBOOK):
            continue
        old = (folder.where / path.relative_to(out)).read_text(encoding="utf-8")
        top = old.split("\n" + MARKER, 1)[0].rstrip("\n").split("\n")
        for k, line in enumerate(top):
            if line.startswith(TOTAL):                          # the total of an earlier merge
                del top[k:k + 2]
                break
        top = [line for line in top if not line.startswith(feedback.BY_HAND)]
        graded = [(q, row[header.index(q)]) for q in manual_qs if row[header.index(q)].strip()]
        final = row[header.index("final_points_earned")].strip()
        at = next((k for k, line in enumerate(top) if line.startswith("Automatically graded")), 1)
        if final and len(graded) == len(manual_qs):
            auto = float(row[header.index("total_points_earned")])
            by_hand = sum(float(v) for _q, v in graded)
            top[at:at] = [feedback.total_line(auto, auto_max, by_hand, sum(manual_qs.values())), ""]
        else:                                      # not in a total yet: say which are graded by hand
            top.insert(at + 1, feedback.by_hand_line(list(manual_qs)))
        text = "\n".join(top) + "\n"
        if graded or i in comments:
            lines = ["", MARKER, "", "## Graded by your instructor", ""]
            for q, v in graded:
                lines.append(f"- {q}: {v} / {num(manual_qs[q])}")
                lines += ["  - " + note.replace("\n", "\n    ") for note in (notes or {}).get((i, q), [])]
            if i in comments:
                lines += ["", "Comment: " + comments[i]]
            text += "\n".join(lines) + "\n"
        if text != old:
            files[path] = text.encode("utf-8")
            title = f"{folder.spec['assignment']}: {folder.files[i]}"
            files[path.with_suffix(".html")] = feedback.page_html(text, title).encode("utf-8")
    return files


def export_plan(out: Path, filled: Path | None = None, book: Path | None = None,
                column: str | None = None, force: bool = False, export_partial: bool = False) -> Plan:
    """Everything hand grading writes, from the ledger (with ``filled`` merged into it first):
    grades.csv, the feedback, the pages, canvas_feedback.zip and, with a gradebook, the LMS import
    and lms.json; checked and computed, nothing written yet (:meth:`Plan.finish` writes it). A
    gradebook that is not there is the command line's mistake: said first, before the CSV's."""
    if book is not None and not book.exists():
        raise lms.GradebookError(f"the gradebook {book} (of the grading run) is not there: "
                                 "give it with --gradebook")
    plan = (merge_plan(out, filled, force) if filled is not None
            else (reapply_plan(out, exported=True) or Plan(out)))
    try:
        made = handback.canvas_zip(out, plan.files)    # the feedback as it is about to be
        if made is not None and plan.files:
            plan.files[made[0]] = made[1]
            plan.lines += made[2]
        if book is not None:
            dest, data, lines = lms.render(out, book, column, plan.table or None, plan.files,
                                           export_partial=export_partial)
            plan.files[dest] = data
            plan.lines += lines
            doc = {"gradebook": str(book.resolve()), "gradebook_column": column}
            plan.files[out / lms.LMS_META] = (json.dumps(doc, indent=1, ensure_ascii=False)
                                              + "\n").encode("utf-8")
    except BaseException:
        plan.discard()
        raise
    return plan


def export(out: Path) -> list[str]:
    """The ledger into every file of ``out`` (``course mark``'s Export): with the gradebook and
    column of the grading run (lms.json), when it had one; the lines to print."""
    book, column = lms.remembered(out)
    plan = export_plan(out, None, book, column)
    plan.finish()
    return plan.lines or [f"{out / LEDGER} holds no hand grade yet: nothing to write"]


# ---------------------------------------------------------------- the command

def main(argv: list[str] | None = None) -> int:
    """``course manual DIR [FILLED.csv] [--gradebook CSV]``: 0 when done, 1 when the CSV has mistakes,
    2 on a bad command line or a gradebook that cannot be filled in; on 1 or 2 nothing in DIR changed."""
    p = argparse.ArgumentParser(prog="course manual",
                                description="Merge hand-graded points into a course grade output folder.")
    p.add_argument("out", type=Path, metavar="DIR", help="the --out folder of course grade")
    p.add_argument("filled", type=Path, nargs="?", metavar="FILLED.csv",
                   help="DIR/manual.csv (or a copy) with the points filled in")
    p.add_argument("--gradebook", type=Path, default=None,
                   help="the gradebook CSV from Canvas (or Moodle's grading worksheet): write "
                        "DIR/canvas_import.csv (moodle_import.csv) with the final points (default: "
                        "the one course grade was given, kept in DIR/lms.json)")
    p.add_argument("--gradebook-column", default=None, metavar="TEXT",
                   help="the gradebook's column for this assignment (default: the one course grade "
                        "was given with that gradebook, else the one naming it)")
    p.add_argument("--force", action="store_true",
                   help="merge cells whose answer someone changed since the CSV was made, or whose "
                        "notebook was re-uploaded since (refused otherwise)")
    p.add_argument("--export-partial", action="store_true",
                   help="export rows whose hand grading is not done with their automatic points only "
                        "(default: held, their gradebook cells left as they are)")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    written: list[Plan] = []
    try:
        book, column = lms.remembered(args.out)
        if args.gradebook is not None:
            same = book is not None and args.gradebook.resolve() == book
            book, column = args.gradebook, args.gradebook_column or (column if same else None)
        elif args.gradebook_column is not None:
            column = args.gradebook_column
        if args.filled is None and book is None:
            p.error("give FILLED.csv, --gradebook, or both (DIR has no gradebook of its grading run)")
        plan = export_plan(args.out, args.filled, book, column, args.force, args.export_partial)
        written.append(plan)
        plan.finish()
    except StaleFiles as exc:
        print(f"course manual: {exc}", file=sys.stderr)
        return 1
    except ManualError as exc:
        print(f"course manual: {exc}\n(nothing in {args.out} was changed)", file=sys.stderr)
        return 1
    except lms.GradebookError as exc:
        print(f"course manual: {exc}\n(nothing in {args.out} was changed)", file=sys.stderr)
        return 2
    finally:
        for made_plan in written:
            made_plan.discard()
    for line in plan.lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
