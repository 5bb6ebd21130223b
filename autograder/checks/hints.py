"""Failures that speak for themselves.

A hidden test's failure shows the student its ``failure_message`` (a hint written for the whole
test). When a check knows better what went wrong (a gate that the answer must pass before the
property counts, a crash in one piece), it raises :class:`Hint`, whose words replace that message:
the judge writes them first in the case's message (:data:`MARK`) and the verdict shows them
(:func:`hint_of`). A hint is the check's own text, never the student's: what the student's code
says crosses the boundary only as the name of a built-in exception and a line of the notebook the
grader read itself.

A gate (a precondition of the property a test checks: the weights could be set, the pieces are
there, the shapes match) fails as itself: a test wraps it in :func:`gate`, and a failure that
happened while a gate's Hint was being handled still shows that Hint (:func:`gate_of`), so a student
is told which check failed first, never the property's message for a property that was not checked.
"""
from __future__ import annotations

import builtins
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:           # the grader's own process reads hints (verdict) without torch; only
    from course.handles import StudentError  # the judge (it has torch already) builds them

MARK = "Hint: "             # how a case's message starts when the check raised a Hint
# what the course's code raises, outside the student's lines, when a check asks a network for a layer,
# parameter or method by the name the notebook gives it and it is not there (set_params of Q.weight,
# MultiHead's mix, a ModuleList called like a Sequential): the gate's words alone would name another
# cause. The error's own text is not shown: after a hidden test's inputs, it could carry them out.
NAMED_PIECE_ERRORS = ("KeyError", "AttributeError", "NotImplementedError")
NAMES = ("a layer, parameter or method the check asks for by the name the notebook gives it is not "
         "there: keep the notebook's names and kinds of layers")
CRASH = "Crash: "           # ... and when the student's code raised, at a line the grader can show
_END = "\n\n"               # where the hint ends and the judge's own account begins


class Hint(AssertionError):
    """A failed check whose message names what is wrong, in a student's words."""

    def __init__(self, text: str) -> None:
        super().__init__(" ".join(str(text).split("\n\n")).strip())


@contextlib.contextmanager
def gate(text: str) -> Iterator[None]:
    """A precondition of the check that follows: whatever fails inside fails as ``Hint(text)``; a
    Hint raised inside keeps its own words (it names what failed more precisely), and where the
    student's code raised at a line the grader can show (or ran too long), the hint says so too (a
    piece that is not there, asked for through a handle, has no line: the gate's words say it)."""
    from course.handles import StudentError, StudentTimeout
    try:
        yield
    except Hint:
        raise
    except StudentError as error:
        if error.line or isinstance(error, StudentTimeout):
            raise Hint(f"{text} ({crash(error, 'code')})") from None
        if error_kind(error) in NAMED_PIECE_ERRORS:
            raise Hint(f"{text} ({NAMES})") from None
        raise Hint(text) from None
    except Exception:
        raise Hint(text) from None


def gate_of(exc: BaseException) -> Hint | None:
    """The Hint a failure stands for: the failure itself when it is one, else the Hint of a gate it
    was raised while handling (also behind ``from None``: a test that turns a failed gate into its
    own message must not hide which check failed first)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, Hint):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


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
    hint = gate_of(exc)
    if hint is not None:
        return f"{MARK}{hint}{_END}{account}"
    if isinstance(exc, StudentError) and exc.line:
        if not hidden:
            return f"{account}\n(in your code at `{exc.line}`)"
        return f"{CRASH}{crash(exc, 'code')}{_END}{account}"
    if isinstance(exc, StudentError) and hidden and error_kind(exc) in NAMED_PIECE_ERRORS:
        return f"{CRASH}{NAMES}{_END}{account}"
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
