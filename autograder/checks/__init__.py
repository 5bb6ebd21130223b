"""The grader's checks: written once, called by the hidden tests of every notebook.

A hidden test cell of a master notebook is a short program that draws its inputs, asks the
student's objects (through ``course.handles``) and hands the answers to the checks here, which
compare them with what the grader computes itself. The judge loads this package (``course
grade``, the Gradescope zip's engine, ``course nbgrader``); it never ships to students, so public
tests stay self-contained and import only ``course`` and torch.

- :mod:`.hints`: failures that say what is wrong (:class:`Hint`), shown in place of a test's message
- :mod:`.answers`: plain answers (shapes, numbers, True or False)
- :mod:`.training`: training measured by the check (the course's loss, parameters read back)
"""
from __future__ import annotations

from .hints import Hint

__all__ = ["Hint"]
