"""What an nbgrader test cell calls in the student's kernel: :func:`check` runs one of the master's
test cases (``from course.nbgrader_check import check``, written by the instructor's nbgrader export,
``instructor/nbgrader/source.py``). It ships with the course package, next to every nbgrader notebook.
"""
from __future__ import annotations

import contextlib
import io
import sys
import warnings
from typing import Any

from .checking import left_as_found


class CheckFailed(AssertionError):
    """A test cell's check failed. Shown as its message alone (no code, no traceback), so that
    nbgrader's feedback never shows a hidden test's lines."""

    def __init__(self, name: str, message: str, detail: str = "") -> None:
        self.name, self.message, self.detail = name, message, detail
        super().__init__(f"{name}: {message}" + (f"\n{detail}" if detail else ""))

    def _render_traceback_(self) -> list[str]:          # IPython shows these lines instead
        lines = [f"\x1b[0;31mCheck failed\x1b[0m: {self.name}", self.message]
        return lines + ([self.detail] if self.detail else [])


def check(run: Any, message: str, name: str = "", hidden: bool = False) -> None:
    """Run one test case (`run()`: the master's test function called on the notebook's names).

    Prints `passed` when it passes; raises CheckFailed with the case's failure message when it
    fails (for a public case also what went wrong, for a hidden one only the message). Whatever the
    student's code prints meanwhile (progress bars, warnings) is kept out of the cell's output,
    since nbgrader fails a test cell that writes to stderr; the random numbers of the notebook are
    left as they were, and so is every name of the notebook (:func:`course.checking.left_as_found`),
    as when `course grade` runs the tests after the notebook.
    """
    sink = io.StringIO()
    error: BaseException | None = None
    try:
        with left_as_found(sys._getframe(1).f_globals), warnings.catch_warnings(), \
                contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            warnings.simplefilter("ignore")
            run()
    except (Exception, SystemExit) as exc:        # a KeyboardInterrupt (nbgrader's timeout) goes on
        error = exc
    if error is not None:
        detail = "" if hidden else f"{type(error).__name__}: {error}"[:2000]
        raise CheckFailed(name or "test", message or "A test failed.", detail) from None
    print(f"passed: {name}" if name else "passed")
