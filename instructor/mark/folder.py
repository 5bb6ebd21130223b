"""What ``course mark`` shows of a graded folder: the hand-graded questions, every row's answer to
each (as the hand-grading pages render it), and which ledger entry each answer is.

Read from the folder alone (``questions.json``, ``grades.csv``, ``results/``) and read again when
``grades.csv`` changes (a re-grade while the server runs; while it is missing, the last state read
is served). Rows come in an order that says nothing
about who they are (by :func:`autograder.csvcells.file_key`, a hash of the row's name) and are
labelled ``#1``, ``#2``, ...; names, files and ids appear only when asked for.
"""
from __future__ import annotations

import hashlib
import html
from dataclasses import dataclass
from pathlib import Path

from autograder import handgrading
from autograder.csvcells import cell_text, file_key
from autograder.results import Result
from autograder.status import GradingStatus

from .. import manual
from ..gradescope_pdf import load_results
from ..ledger import Key, Ledger


@dataclass
class Row:
    """One submission, as the grader left it."""

    file: str
    sha256: str
    label: str                    # "#7": what an anonymous page calls it
    auto: float                   # its automatic points
    status: str
    result: Result | None

    @property
    def id(self) -> str:
        """What the page addresses the answer by: the row's key and its notebook's content, so a
        save never lands on another row (a re-grade that adds a row moves every position after it)."""
        return f"{file_key(self.file)}.{self.sha256[:16]}"

    @property
    def gradable(self) -> bool:
        """Whether the row has an answer to grade: an unreadable upload (or a row without results)
        has none, so it is shown but not counted as an answer left to grade."""
        return self.result is not None and not GradingStatus.parse(self.status).kind.unreadable


class Folder:
    """The graded folder's rows and questions, read again when grades.csv changes."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self._stamp: tuple | None = None
        self._noted = ""                # the rows whose content keys the ledger has noted
        self.refresh()

    def _mtime(self) -> tuple:
        st = (self.out / "grades.csv").stat()
        return (st.st_mtime_ns, st.st_size)

    def refresh(self) -> bool:
        """Read the folder again if grades.csv changed since; True when it did. While a re-grade
        has removed grades.csv (or is writing it), the last state read stays served: every answer
        is addressed by its content (:attr:`Row.id`, the ledger's keys), so a grade given meanwhile
        is still that notebook's."""
        try:
            stamp = self._mtime()
            if stamp == self._stamp:
                return False
            folder = manual.Folder(self.out)
        except (OSError, manual.ManualError):
            if self._stamp is None:
                raise
            return False
        self.spec = folder.spec
        self.name = str(self.spec.get("assignment", ""))
        self.auto_points = float(self.spec.get("auto_points", 0.0))
        self.questions = {q["name"]: q for q in self.spec["questions"] if q.get("manual")}
        results = {r.file: r for r in load_results(folder.where)}     # the grading folder read
        col = folder.header.index("total_points_earned")
        order = sorted(range(len(folder.files)), key=lambda i: file_key(folder.files[i]))
        self.rows = [Row(folder.files[i], folder.sha(i), f"#{k}", float(folder.body[i][col] or 0),
                         cell_text(folder.status.get(folder.files[i], "")), results.get(folder.files[i]))
                     for k, i in enumerate(order, 1)]
        ids = "\n".join([*(row.id for row in self.rows),
                          *(f"{q}:{spec['points']}" for q, spec in self.questions.items())])
        self.stamp = hashlib.sha256(ids.encode()).hexdigest()[:16]
        self._folder = folder
        self._by_file = {f: i for i, f in enumerate(folder.files)}
        self._stamp = stamp
        return True

    def current(self, stamp: object) -> bool:
        """Whether a page that read the rows when they were ``stamp`` (:attr:`stamp`: every row's
        id and the hand-graded questions) still shows the class as it is: after a re-grade that
        changed any row, a page loaded before it saves nothing, on any row, until it is reloaded."""
        return isinstance(stamp, str) and stamp == self.stamp

    def index(self, n: int, row_id: object) -> int | None:
        """Row ``n`` when it is still the row ``row_id`` names, else None (the class was re-graded
        since the page was loaded)."""
        if 0 <= n < len(self.rows) and isinstance(row_id, str) and self.rows[n].id == row_id:
            return n
        return None

    def keys(self, ledger: Ledger, question: str) -> list[Key]:
        """The ledger key of each row's answer to ``question`` (in :attr:`rows` order): the one a
        re-grade gives back to it (the same content, :func:`instructor.manual.match`), else a new
        one of its content and name."""
        if self._noted != self.stamp:      # the rows' answers as read now: a re-grade follows them
            ledger.note_contents(self._folder.content_keys())
            self._noted = self.stamp
        contents = ledger.contents()
        known = {k: {"sha256": k[0], "file": k[1], "question": k[2], "when": a.at,
                     "content": contents.get(k, "")} for k, a in ledger.answers().items()}
        applied, _missed = manual.match(self._folder, known)
        keys = []
        for row in self.rows:
            entry = applied.get((self._by_file[row.file], question))
            keys.append(manual._key(entry) if entry else (row.sha256, row.file, question))
        return keys

    def card(self, index: int, question: str, names: bool, given: float | None) -> str:
        """The answer of row ``index`` to ``question`` as the hand-grading pages show it (escaped,
        its figures checked and embedded, no script), under its anonymous label unless ``names``."""
        row = self.rows[index]
        points = float(self.questions[question]["points"])
        if row.result is None:
            return (f"<section class='answer'><h2>{html.escape(row.label)}</h2><p class='unanswered'>"
                    "No results file for this row.</p></section>")
        return handgrading.answer_html(self.out, question, row.result, None, points, given=given,
                                       anonymous=None if names else row.label)
