"""Failures that speak for themselves.

A hidden test's failure shows the student its ``failure_message`` (a hint written for the whole
test). When a check knows better what went wrong (a gate that the answer must pass before the
property counts, a crash in one piece), it raises :class:`Hint`, whose words replace that message:
the judge writes them first in the case's message (:data:`MARK`) and the verdict shows them
(:func:`hint_of`). A hint is the check's own text, never the student's: what the student's code
says crosses the boundary only as the name of a built-in exception and a line of the notebook the
grader read itself.
"""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

if TYPE_CHECKING:           # the grader's own process reads hints (verdict) without torch; only
    from course.handles import StudentError  # the judge (it has torch already) builds them

MARK = "Hint: "             # how a case's message starts when the check raised a Hint
CRASH = "Crash: "           # ... and when the student's code raised, at a line the grader can show
_END = "\n\n"               # where the hint ends and the judge's own account begins


class Hint(AssertionError):
    """A failed check whose message names what is wrong, in a student's words."""

    def __init__(self, text: str) -> None:
        super().__init__(" ".join(str(text).split("\n\n")).strip())


def hint_of(message: str) -> str | None:
    """The hint a case's message carries, or None (a message the judge wrote for a Hint)."""
    if not message.startswith(MARK):
        return None
    return message[len(MARK):].split(_END, 1)[0] or None


def shown(message: str, failure_message: str | None) -> str | None:
    """What a student reads of a failed hidden case: the check's hint when it gave one; else the
    case's failure message, and where the student's code raised, that too."""
    if message.startswith(CRASH):
        crashed = message[len(CRASH):].split(_END, 1)[0]
        return f"{failure_message} ({crashed})" if failure_message else crashed
    return hint_of(message) or failure_message


def judge_message(exc: BaseException, account: str, hidden: bool = True) -> str:
    """The case's message for a failure: the hint first, when there is one (or where the student's
    code raised), then the judge's account of where the test failed. A public case's message is
    the account alone (the student reads it whole), with the line where the student's code raised."""
    from course.handles import StudentError
    if isinstance(exc, Hint):
        return f"{MARK}{exc}{_END}{account}"
    if isinstance(exc, StudentError) and exc.line:
        if not hidden:
            return f"{account}\n(in your code at `{exc.line}`)"
        return f"{CRASH}{crash(exc, 'code')}{_END}{account}"
    return account


_BUILTIN_ERRORS = {name for name, value in vars(builtins).items()
                   if isinstance(value, type) and issubclass(value, BaseException)}


def error_kind(error: StudentError) -> str:
    """The kind of exception the student's code raised, when it is one of Python's own (a class of
    the student's making could carry any name: it is called "an exception" then)."""
    kind = str(error).partition(":")[0].strip()
    return kind if kind in _BUILTIN_ERRORS else "an exception"


def crash(error: StudentError, piece: str) -> str:
    """What to tell a student whose `piece` raised (or ran over the time limit) in a check: the kind
    of error and, where the grader knows it, the line of their notebook."""
    from course.handles import StudentTimeout
    if isinstance(error, StudentTimeout):
        return f"your {piece} ran over the time limit"
    said = f"your {piece} raised {error_kind(error)}"
    return f"{said} at `{error.line}`" if error.line else said
