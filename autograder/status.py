"""A row's ``grading_status``: what kind of status it is (:class:`Status`) and its words
(:class:`GradingStatus`), written as one line of text into ``grades.csv``, ``results/<stem>.json``,
the report, the feedback, Gradescope's results and nbgrader's log.

Every status the engine gives starts with its kind's words: ``ok`` alone, ``timeout: ...``,
``process killed by SIGKILL ...``, ``sys.exit() in cell 3``, ``sandbox setup failed`` with or
without ``: ...``. :meth:`GradingStatus.parse` reads any text back (the CSV, a results file) and
:attr:`GradingStatus.text` gives exactly that text again, so that code decides by kind and writes
the words unchanged; a text of no known kind is :attr:`Status.OTHER`, its words kept whole.
"""
from __future__ import annotations

import enum
import functools
from dataclasses import dataclass


class Status(enum.Enum):
    """The kinds of grading status; the value is the words a status of that kind starts with."""

    OK = "ok"
    TAMPERING = "tampering detected"
    TIMEOUT = "timeout"
    CELL_TIMEOUT = "cell timeout"
    MEMORY_LIMIT = "memory limit"
    SYS_EXIT = "sys.exit()"                           # "sys.exit() in cell 3"
    CELLS_DELETED = "cells deleted"
    SUSPICIOUS = "suspicious code"
    PROCESS_KILLED = "process killed by"              # "process killed by SIGKILL in cell 2 ..."
    PROCESS_EXITED = "process exited"                 # "process exited in cell 2 (exit code ...)"
    PROCESS_ENDED = "process ended"                   # "process ended during the tests ..."
    GRADING_ERROR = "grading error"
    JUDGE_ERROR = "grading error in the judge"
    GRADING_INTERRUPTED = "grading interrupted"
    NOTEBOOK_ERROR = "error reported by the notebook's process"
    UNREADABLE = "unreadable"                          # an unreadable row with nothing more said
    UNREADABLE_NOTEBOOK = "unreadable notebook"
    UNREADABLE_FILE = "unreadable file"
    UNREADABLE_ZIP = "unreadable zip"
    UNREADABLE_ZIP_MEMBER = "unreadable zip member"
    REJECTED_UPLOAD = "rejected upload"
    REJECTED_FILE = "rejected file"
    SANDBOX_FAILED = "sandbox setup failed"
    GRADER_ERROR = "grader error"
    NAME_CLASH = "name clash"
    NOT_GRADED = "not graded"                          # over the per-student cap (inputs)
    WRONG_NOTEBOOK = "wrong notebook"
    OTHER = ""                                         # none of these: the detail is the whole text

    @property
    def sep(self) -> str | None:
        """What stands between the kind's words and the detail (None: this kind has no detail)."""
        if self in _WORDS_ONLY:
            return None
        return " " if self in _SPACED else ": "

    @property
    def bare(self) -> bool:
        """Whether a status of this kind may be its words alone, with no separator and no detail."""
        return self in _WORDS_ONLY or self in _EITHER

    # ---------------------------------------------------------------- what the kinds mean
    @property
    def flagged(self) -> bool:
        """Points a person must confirm before they count anywhere (the rules found code they do not
        allow): held from the gradebook import and from the Gradescope total."""
        return self is Status.SUSPICIOUS

    @property
    def unreadable(self) -> bool:
        """A corrupt or refused upload: held from the gradebook import, never exported as 0."""
        return self in _UNREADABLE

    @property
    def never_ran(self) -> bool:
        """Not run at all (another week's notebook, one that could not be read): a cached row of this
        kind is reused whatever its tests became."""
        return self in (Status.WRONG_NOTEBOOK, Status.UNREADABLE_NOTEBOOK)

    @property
    def keepable(self) -> bool:
        """Graded for what the notebook is, not for how the machine was: worth keeping in the cache."""
        return self in _KEEPABLE

    @property
    def regrade(self) -> bool:
        """To grade again (the grader failed, or the row's name is not one student's): left out of the
        gradebook import."""
        return self in (Status.GRADING_ERROR, Status.JUDGE_ERROR, Status.NAME_CLASH)


_WORDS_ONLY = frozenset({Status.OK, Status.UNREADABLE, Status.GRADING_INTERRUPTED})
# what a submission's process may say it failed at (autograder.intake.FATAL_KINDS): alone or with
# ": detail"
_EITHER = frozenset({Status.UNREADABLE_NOTEBOOK, Status.SANDBOX_FAILED, Status.GRADER_ERROR})
_SPACED = frozenset({Status.SYS_EXIT, Status.PROCESS_KILLED, Status.PROCESS_EXITED, Status.PROCESS_ENDED})
_UNREADABLE = frozenset({Status.UNREADABLE_NOTEBOOK, Status.UNREADABLE_FILE, Status.UNREADABLE_ZIP,
                         Status.UNREADABLE_ZIP_MEMBER, Status.REJECTED_UPLOAD, Status.REJECTED_FILE})
_KEEPABLE = frozenset({Status.OK, Status.SUSPICIOUS, Status.CELLS_DELETED, Status.SYS_EXIT,
                       Status.TAMPERING, Status.WRONG_NOTEBOOK, Status.UNREADABLE_NOTEBOOK})
# longest words first: "grading error in the judge: x" is never read as "grading error"
_BY_LENGTH = sorted((s for s in Status if s is not Status.OTHER), key=lambda s: -len(s.value))


@dataclass(frozen=True)
class GradingStatus:
    """One row's status: its kind and the words after the kind's own (``detail``)."""

    kind: Status
    detail: str = ""

    @property
    def text(self) -> str:
        """The status as grades.csv, results/*.json and the reports write it."""
        kind, sep = self.kind, self.kind.sep
        if kind is Status.OTHER:
            return self.detail
        if sep is None or (not self.detail and kind.bare):
            return kind.value
        return f"{kind.value}{sep}{self.detail}"

    def __str__(self) -> str:
        return self.text

    @property
    def ok(self) -> bool:
        return self.kind is Status.OK

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def parse(text: str) -> GradingStatus:
        """The status whose :attr:`text` is ``text`` (any text: one of no known kind is
        :attr:`Status.OTHER`)."""
        for kind in _BY_LENGTH:
            words, sep = kind.value, kind.sep
            if text == words and kind.bare:
                return GradingStatus(kind)
            if sep is not None and text.startswith(words + sep):
                found = GradingStatus(kind, text[len(words) + len(sep):])
                if found.text == text:      # not "sandbox setup failed: " (its detail left blank)
                    return found
        return GradingStatus(Status.OTHER, text)


def kind_of(text: str) -> Status:
    """The kind of the status written as ``text``."""
    return GradingStatus.parse(text).kind
