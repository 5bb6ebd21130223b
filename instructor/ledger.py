"""The hand-grade ledger: one SQLite database in a graded folder, ``DIR/hand_grades.sqlite``.

Every hand grade of the folder is here, whichever way it was given: ``course manual`` (a filled-in
CSV), ``course mark`` (the browser, several TAs at once) or both. ``grades.csv``, the feedback, the
pages, ``canvas_feedback.zip`` and the LMS imports are written from it (:mod:`instructor.manual`), and
``course grade`` into the folder never removes it: a re-grade gives every hand grade back to the row
with the same notebook content.

**What it holds.** An *answer* is one submission's answer to one hand-graded question, keyed as
the old ``hand_grades.json`` was: ``(sha256, file, question)``, the SHA-256 of the notebook's bytes
as submitted, the row's name and the question (``""`` for the row's own comment). It has a comment,
the *rubric items* applied to it, and points typed directly (``course manual``'s CSV, or a number
typed in the browser), which take the place of the rubric's sum. Its grade is the points typed,
else the sum of its items clamped to the question's points (none: not graded yet). A rubric item
(points, positive or negative, and a text) belongs to a question; editing it changes every answer
it is applied to.

**Answers, not files.** ``content`` holds each answer's content key (a hash of its cells' sources
and images as the grader read them, :func:`autograder.handgrading.content_key`), noted for every
row the ledger's users saw (:meth:`Ledger.note_contents`). A re-grade gives a hand grade back to
the same student's answer whose content key is unchanged, even when the notebook's bytes changed
(a re-upload with other answers changed). A ledger made before the table existed gets it, empty,
when opened: its grades follow the notebook's bytes as before until their contents are noted.

**No lost update.** Every answer and every item has a version. A change names the version it was
made from; when another change came first, it is refused (:class:`Conflict`, with what is there now
and who changed it), never written over; the comment or points of a refused save are kept in
``refused`` (:meth:`Ledger.keep_refused`), so that nothing a TA typed is lost. Every change is kept
in ``history`` with who and when.
SQLite in WAL mode lets several TAs' servers and ``course manual`` use one database at once; each
change is one transaction.

**Migration.** A folder graded before the database existed has ``hand_grades.json``: its entries are
copied in when the database is made, and the file is renamed ``hand_grades.json.migrated``.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import cast

from autograder import outdir, refusal

DB = "hand_grades.sqlite"
OLD_LEDGER = "hand_grades.json"
COMMENT = ""                            # the question of a row's own comment
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answer(
    sha256 TEXT NOT NULL, file TEXT NOT NULL, question TEXT NOT NULL,
    points REAL, comment TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL,
    who TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (sha256, file, question));
CREATE TABLE IF NOT EXISTS item(
    id INTEGER PRIMARY KEY, question TEXT NOT NULL, points REAL NOT NULL, text TEXT NOT NULL,
    position INTEGER NOT NULL, version INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0,
    who TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS applied(
    sha256 TEXT NOT NULL, file TEXT NOT NULL, question TEXT NOT NULL, item INTEGER NOT NULL,
    PRIMARY KEY (sha256, file, question, item));
CREATE TABLE IF NOT EXISTS baseline(file TEXT NOT NULL, question TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (file, question));
CREATE TABLE IF NOT EXISTS refused(
    id INTEGER PRIMARY KEY, at TEXT NOT NULL, who TEXT NOT NULL, key TEXT NOT NULL, version INTEGER NOT NULL,
    comment TEXT, points REAL);
CREATE TABLE IF NOT EXISTS content(sha256 TEXT NOT NULL, file TEXT NOT NULL, question TEXT NOT NULL,
    key TEXT NOT NULL, PRIMARY KEY (sha256, file, question));
CREATE TABLE IF NOT EXISTS history(
    id INTEGER PRIMARY KEY, at TEXT NOT NULL, who TEXT NOT NULL, what TEXT NOT NULL,
    key TEXT NOT NULL, before TEXT, after TEXT);
"""
Key = tuple[str, str, str]              # (sha256, file, question)


class LedgerError(ValueError):
    """A change the ledger refuses (nothing was written)."""


class Conflict(LedgerError):
    """Someone else changed the answer or item first: ``now`` is what is there, ``by`` who did it."""

    def __init__(self, what: str, now: dict, by: list[dict]) -> None:
        who = ", ".join(sorted({h["who"] for h in by})) or "someone"
        super().__init__(f"{what} was changed by {who} since you opened it: your change was not saved")
        self.now, self.by = now, by


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class Answer:
    """One answer as the ledger holds it (``version`` 0: nothing yet)."""

    key: Key
    points: float | None = None          # typed directly (takes the place of the rubric's sum)
    comment: str = ""
    items: list[int] = field(default_factory=list)
    version: int = 0
    who: str = ""
    at: str = ""

    def as_dict(self) -> dict:
        return {"sha256": self.key[0], "file": self.key[1], "question": self.key[2], "points": self.points,
                "comment": self.comment, "items": sorted(self.items), "version": self.version,
                "who": self.who, "at": self.at}


@dataclass
class Item:
    id: int
    question: str
    points: float
    text: str
    position: int
    version: int
    deleted: bool = False

    def as_dict(self) -> dict:
        return {"id": self.id, "question": self.question, "points": self.points, "text": self.text,
                "position": self.position, "version": self.version}


def clamp(total: float, most: float | None) -> float:
    """A rubric's sum as a grade: never below 0, never above the question's points; 0 for a sum
    that is no number (an infinite item's: NaN is no full marks)."""
    if not math.isfinite(total):
        return 0.0
    return max(0.0, total if most is None else min(most, total))


def finite(points: float) -> float:
    """An item's points: a finite number, else :class:`LedgerError`."""
    try:
        value = float(points)
    except (TypeError, ValueError):
        raise LedgerError(f"{points!r} is not a number of points") from None
    if not math.isfinite(value):
        raise LedgerError(f"{points!r} is not a number of points (it must be finite)")
    return value


class Ledger:
    """The folder's hand-grade database (see the module's docstring); one connection."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / DB
        made = not self.path.exists()
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA busy_timeout=30000")
            self.db.executescript(SCHEMA)
        except sqlite3.Error as exc:
            code = refusal.unwritable(out)      # the folder says no: a damaged database is not the news
            if code is not None:
                raise LedgerError(refusal.explain(OSError(code, os.strerror(code), str(out)))
                                  + "; nothing changed") from None
            raise LedgerError(f"{self.path} cannot be opened ({exc}): nothing changed; restore it from "
                              "a backup or move it away") from None
        self._maxima: tuple[tuple, dict[str, float]] = ((), {})
        _ = self.maxima                 # read now: a re-grade may remove questions.json for a while
        self.made = made                # made just now: a change that is not kept leaves no database
        if made:
            self._migrate()

    @property
    def maxima(self) -> dict[str, float]:
        """Each hand-graded question's points as ``questions.json`` says now (a re-grade may have
        changed them while a server runs)."""
        try:
            st = (self.out / "questions.json").stat()
        except OSError:
            return self._maxima[1]          # a re-grade is writing it: the points last read
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._maxima[0]:
            found = _maxima(self.out)
            if found or not self._maxima[1]:
                self._maxima = (stamp, found)
        return self._maxima[1]

    @classmethod
    def existing(cls, out: Path) -> Ledger | None:
        """The folder's ledger, or None when it has none (nor an old hand_grades.json to migrate)."""
        if (out / DB).exists() or (out / OLD_LEDGER).exists():
            return cls(out)
        return None

    def close(self) -> None:
        self.db.close()

    def forget(self) -> None:
        """Close, and remove the database if it was made by this connection and holds nothing
        (a command that could not finish leaves the folder as it was)."""
        empty = self.made and not self.db.execute("SELECT 1 FROM history LIMIT 1").fetchone()
        self.db.close()
        if empty:
            for suffix in ("", "-wal", "-shm"):
                self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)

    # ------------------------------------------------------------ transactions

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One change, all or nothing; other writers wait for it (up to 30 s)."""
        self.begin()
        try:
            yield
        except BaseException:
            self.rollback()
            raise
        self.commit()

    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def _log(self, who: str, what: str, key: object, before: object, after: object) -> None:
        self.db.execute("INSERT INTO history(at, who, what, key, before, after) VALUES (?,?,?,?,?,?)",
                        (now(), who, what, json.dumps(key), json.dumps(before), json.dumps(after)))

    # ------------------------------------------------------------ reading

    def items(self, question: str | None = None, deleted: bool = False) -> list[Item]:
        rows: list[tuple[int, str, float, str, int, int, int]] = self.db.execute(
            "SELECT id, question, points, text, position, version, deleted FROM item "
            "ORDER BY question, position, id").fetchall()
        found = [Item(*r[:6], bool(r[6])) for r in rows]
        return [i for i in found
                if (question is None or i.question == question) and (deleted or not i.deleted)]

    def answer(self, key: Key) -> Answer:
        row = self.db.execute("SELECT points, comment, version, who, at FROM answer WHERE sha256=? AND "
                              "file=? AND question=?", key).fetchone()
        items = [r[0] for r in self.db.execute("SELECT item FROM applied WHERE sha256=? AND file=? AND "
                                               "question=? ORDER BY item", key)]
        if row is None:
            return Answer(key, items=items)
        return Answer(key, row[0], row[1], items, row[2], row[3], row[4])

    def answers(self) -> dict[Key, Answer]:
        found: dict[Key, Answer] = {}
        for s, f, q, p, c, v, w, a in self.db.execute(
                "SELECT sha256, file, question, points, comment, version, who, at FROM answer"):
            found[(s, f, q)] = Answer((s, f, q), p, c, [], v, w, a)
        for s, f, q, i in self.db.execute("SELECT sha256, file, question, item FROM applied ORDER BY item"):
            found.setdefault((s, f, q), Answer((s, f, q))).items.append(i)
        return found

    def grade(self, answer: Answer, items: dict[int, Item] | None = None) -> float | None:
        """The answer's points: typed, else its items' sum clamped; None when not graded, or when the
        points typed are no longer within the question's (its points were lowered since)."""
        if answer.points is not None:
            most = self.maxima.get(answer.key[2])
            if not 0 <= answer.points <= (math.inf if most is None else most + 1e-9):
                return None
            return float(answer.points)
        if not answer.items:
            return None
        items = items if items is not None else {i.id: i for i in self.items(deleted=True)}
        return clamp(sum(items[i].points for i in answer.items if i in items),
                     self.maxima.get(answer.key[2]))

    def entries(self) -> dict[Key, dict]:
        """Every hand grade and comment as ``hand_grades.json`` held them: {key: {"sha256", "file",
        "question", "points" (or, for a row's comment, "comment"), "when"}}, and for a question
        also its comment and the texts of its rubric items (``notes``), for the feedback."""
        items = {i.id: i for i in self.items(deleted=True)}
        contents = self.contents()
        out: dict[Key, dict] = {}
        for key, a in self.answers().items():
            base = {"sha256": key[0], "file": key[1], "question": key[2], "when": a.at,
                    "content": contents.get(key, "")}
            if key[2] == COMMENT:
                if a.comment:
                    out[key] = {**base, "comment": a.comment}
                continue
            points = a.points if a.points is not None else self.grade(a, items)   # over the maximum: listed
            if points is not None:
                notes = [f"{_signed(items[i].points)}: {items[i].text}" for i in a.items if i in items]
                out[key] = {**base, "points": points, "notes": notes + ([a.comment] if a.comment else [])}
        return out

    def contents(self) -> dict[Key, str]:
        """The content key of each answer noted (:meth:`note_contents`)."""
        rows = self.db.execute("SELECT sha256, file, question, key FROM content")
        return {(s, f, q): k for s, f, q, k in rows}

    def note_contents(self, found: dict[Key, str]) -> None:
        """Notes each answer's content key. The first noted stays: it is what the grader read when
        that notebook was first seen, the answer a hand grade of it was given to. Not a change of
        any grade (``history`` does not see it)."""
        self.db.executemany("INSERT OR IGNORE INTO content VALUES (?,?,?,?)",
                            [(*key, value) for key, value in found.items() if value])

    def history(self, key: object | None = None, since: int = 0) -> list[dict]:
        rows = self.db.execute("SELECT id, at, who, what, key, before, after FROM history WHERE id > ? "
                               "ORDER BY id", (since,)).fetchall()
        out = [{"id": r[0], "at": r[1], "who": r[2], "what": r[3], "key": json.loads(r[4]),
                "before": json.loads(r[5]) if r[5] else None, "after": json.loads(r[6]) if r[6] else None}
               for r in rows]
        return out if key is None else [h for h in out if h["key"] == json.loads(json.dumps(key))]

    def last_change(self) -> int:
        """The number of the ledger's latest change (0: none yet): what ``manual.csv`` remembers."""
        return int(self.db.execute("SELECT COALESCE(MAX(id), 0) FROM history").fetchone()[0])

    def changed_since(self, key: Key, since: int, but: str, history: list[dict] | None = None) -> list[dict]:
        """The changes after change number ``since`` to the answer ``key`` or to a rubric item
        applied to it, made by anyone but ``but`` (``history``: :meth:`history`, read once)."""
        items = set(self.answer(key).items)
        return [h for h in (self.history() if history is None else history)
                if h["id"] > since and h["who"] != but and
                (h["key"] == list(key) or (h["what"].startswith("item") and h["key"] in items))]

    # ------------------------------------------------------------ changing

    def save(self, key: Key, version: int, who: str, *, points: float | None = None,
             comment: str | None = None, items: list[int] | None = None, typed: bool = False) -> Answer:
        """One answer changed from ``version`` (what the TA saw): its comment, its rubric items, or
        the points typed (``typed``; None goes back to the rubric). Refused with :class:`Conflict`
        when it changed since. Call inside :meth:`transaction`."""
        before = self.answer(key)
        if before.version != version:
            raise Conflict(f"{key[2]} of this answer", before.as_dict(),
                           [h for h in self.history(list(key)) if h["after"] and
                            h["after"].get("version", 0) > version])
        most = self.maxima.get(key[2])
        if typed and points is not None and (points < 0 or (most is not None and points > most + 1e-9)):
            raise LedgerError(f"{points:g} is not between 0 and {most:g}")
        known = {i.id: i for i in self.items(key[2])}
        if items is not None and any(i not in known for i in items):
            raise LedgerError("a rubric item of another question, or one deleted")
        after = Answer(key, points if typed else before.points,
                       before.comment if comment is None else comment,
                       sorted(set(before.items if items is None else items)), before.version + 1, who, now())
        if items is not None and not typed:
            after.points = None                       # applying an item gives the grade back to the rubric
        self.db.execute("INSERT OR REPLACE INTO answer(sha256, file, question, points, comment, version, "
                        "who, at) VALUES (?,?,?,?,?,?,?,?)", (*key, after.points, after.comment,
                                                              after.version, who, after.at))
        self.db.execute("DELETE FROM applied WHERE sha256=? AND file=? AND question=?", key)
        self.db.executemany("INSERT INTO applied VALUES (?,?,?,?)", [(*key, i) for i in after.items])
        self._log(who, "answer", list(key), before.as_dict() if before.version else None, after.as_dict())
        return after

    def keep_refused(self, key: Key, version: int, who: str, comment: str | None,
                     points: float | None) -> None:
        """What a refused save (:class:`Conflict`) would have written: kept apart from the answer
        (nothing is written over), for the TA to merge. Not a change: ``history`` and
        :meth:`changed_since` do not see it."""
        if comment is None and points is None:
            return
        self.db.execute("INSERT INTO refused(at, who, key, version, comment, points) VALUES (?,?,?,?,?,?)",
                        (now(), who, json.dumps(list(key)), version, comment, points))

    def refused(self, key: Key | None = None) -> list[dict]:
        """The refused saves kept by :meth:`keep_refused` (of the answer ``key``), oldest first."""
        rows = self.db.execute("SELECT at, who, key, version, comment, points FROM refused ORDER BY id")
        out = [{"at": r[0], "who": r[1], "key": json.loads(r[2]), "version": r[3], "comment": r[4],
                "points": r[5]} for r in rows]
        return out if key is None else [r for r in out if r["key"] == list(key)]

    def _same_text(self, question: str, text: str, but: int | None = None) -> None:
        """Refuses a second item of ``question`` that says what one already says (the feedback
        would list the line twice, and a TA would not know which to apply)."""
        for other in self.items(question):
            if other.id != but and other.text.casefold() == text.casefold():
                raise LedgerError(f"rubric item {other.position} already says \"{other.text}\" "
                                  f"({_signed(other.points)}): apply or edit that one")

    def add_item(self, question: str, points: float, text: str, who: str) -> Item:
        text = " ".join(text.split())                 # one line: it is a line of the feedback
        points = finite(points)
        if not text:
            raise LedgerError("a rubric item needs a text")
        self._same_text(question, text)
        position = 1 + max([i.position for i in self.items(question)] + [0])
        cur = self.db.execute("INSERT INTO item(question, points, text, position, version, who, at) "
                              "VALUES (?,?,?,?,1,?,?)", (question, float(points), text.strip(), position,
                                                         who, now()))
        assert cur.lastrowid is not None                # an INSERT sets it
        item = Item(int(cur.lastrowid), question, float(points), text.strip(), position, 1)
        self._log(who, "item", item.id, None, item.as_dict())
        return item

    def edit_item(self, item_id: int, version: int, who: str, *, points: float | None = None,
                  text: str | None = None, delete: bool = False) -> Item:
        """An item's points or text changed (every answer it is applied to follows), or the item
        deleted (refused while it is applied to any answer)."""
        found = [i for i in self.items(deleted=True) if i.id == item_id]
        if not found or found[0].deleted:
            raise LedgerError(f"no rubric item {item_id}")
        before = found[0]
        if before.version != version:
            raise Conflict(f"rubric item {before.position} ({before.text})", before.as_dict(),
                           [h for h in self.history(item_id) if h["after"] and
                            h["after"].get("version", 0) > version])
        if delete:
            used = self.db.execute("SELECT COUNT(*) FROM applied WHERE item=?", (item_id,)).fetchone()[0]
            if used:
                raise LedgerError(f"rubric item {before.position} is applied to {used} answers: take it off "
                                  "them first (or change its points or text)")
        after = Item(before.id, before.question, before.points if points is None else finite(points),
                     before.text if text is None else " ".join(text.split()), before.position,
                     before.version + 1, delete)
        if not after.text:
            raise LedgerError("a rubric item needs a text")
        if not delete:
            self._same_text(before.question, after.text, but=before.id)
        self.db.execute("UPDATE item SET points=?, text=?, version=?, deleted=?, who=?, at=? WHERE id=?",
                        (after.points, after.text, after.version, int(delete), who, now(), item_id))
        self._log(who, "item deleted" if delete else "item", item_id, before.as_dict(), after.as_dict())
        return after

    def set_points(self, key: Key, points: float, who: str) -> bool:
        """``course manual``: the points typed into the CSV, unless they are what the ledger gives
        already (a pre-filled cell is no change: its rubric stays). True when written."""
        current = self.answer(key)
        if self.grade(current) is not None and abs(cast(float, self.grade(current)) - points) < 1e-9:
            return False
        self.save(key, current.version, who, points=points, typed=True)
        return True

    def set_comment(self, key: Key, text: str, who: str) -> bool:
        current = self.answer(key)
        if current.comment == text:
            return False
        self.save(key, current.version, who, comment=text)
        return True

    def set_baseline(self, cells: dict[tuple[str, str], str]) -> None:
        """What manual.csv was pre-filled with: a cell left as it was is no change to merge."""
        self.db.execute("DELETE FROM baseline")
        self.db.executemany("INSERT INTO baseline VALUES (?,?,?)", [(f, q, v) for (f, q), v in cells.items()])

    def baseline(self) -> dict[tuple[str, str], str]:
        return {(f, q): v for f, q, v in self.db.execute("SELECT file, question, value FROM baseline")}

    # ------------------------------------------------------------ the old ledger

    def _migrate(self) -> None:
        old = self.out / OLD_LEDGER
        if not old.exists():
            return
        try:
            entries = json.loads(old.read_text(encoding="utf-8"))["grades"]
            with self.transaction():
                for e in entries:
                    key = (str(e["sha256"]), str(e["file"]), str(e["question"]))
                    who = f"{OLD_LEDGER} ({e.get('when', '')})"
                    if key[2] == COMMENT:
                        self.save(key, 0, who, comment=str(e.get("comment", "")))
                    else:
                        self.save(key, 0, who, points=float(e["points"]), typed=True)
        except (OSError, ValueError, KeyError, TypeError, LedgerError) as exc:
            self.db.close()
            self.path.unlink(missing_ok=True)
            raise LedgerError(f"{old} cannot be read ({exc}): nothing changed; restore it from a backup "
                              "or move it away") from None
        old.rename(old.with_name(OLD_LEDGER + ".migrated"))


def _signed(points: float) -> str:
    return f"{'+' if points >= 0 else ''}{points:g}"


def _maxima(out: Path) -> dict[str, float]:
    """Each hand-graded question's points, from the folder's questions.json."""
    try:
        spec = json.loads((outdir.resolve(out) / "questions.json").read_text(encoding="utf-8"))
        return {q["name"]: float(q["points"]) for q in spec["questions"] if q.get("manual")}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
