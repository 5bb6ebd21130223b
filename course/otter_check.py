"""What the setup cell makes ``grader`` from: Otter's ``Notebook``, with checks that leave the notebook
as they found them. It ships with the course package, next to every notebook.
"""
from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from typing import Any

from .checking import left_as_found


class Grader:
    """Otter's ``otter.Notebook`` (anything but ``check`` is Otter's own), whose ``check`` runs the
    question's public tests so that the notebook is as it was afterwards: the same random numbers
    next, the same names (:func:`course.checking.left_as_found`). A student who runs the checks
    sees the same numbers in later cells as one who does not. What the student's code prints while
    it is checked is not shown, as in nbgrader's test cells (:mod:`course.nbgrader_check`)."""

    def __init__(self, notebook: Any) -> None:
        self._notebook = notebook

    def check(self, question: str, global_env: dict[str, Any] | None = None) -> Any:
        """Run the public tests of ``question`` on the notebook's names (the caller's globals)."""
        env = global_env if global_env is not None else sys._getframe(1).f_globals
        # what the student's code prints while it is checked (a progress bar frozen at 0%) would
        # read as part of the verdict: the check shows its result alone
        with left_as_found(env), _quiet():
            return Shown(self._notebook.check(question, env))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._notebook, name)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Nothing the checked code prints or displays reaches the cell's output (IPython's capture
    takes progress bars shown as widgets or HTML too; outside IPython, the two streams)."""
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            from IPython.utils.capture import capture_output
        except ImportError:
            yield
            return
        with capture_output(display=True):
            yield


class Shown:
    """A check's result, shown as Otter shows it, without Otter's draw of Python's random numbers
    (it picks an emoji for a check that passed)."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def _repr_html_(self) -> str:
        with left_as_found():
            return self.result._repr_html_()

    def __repr__(self) -> str:
        with left_as_found():
            return repr(self.result)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.result, name)
