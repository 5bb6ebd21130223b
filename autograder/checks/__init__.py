"""The grader's checks: written once, called by the hidden tests of every notebook.

A hidden test cell of a master notebook is a short program that draws its inputs, asks the
student's objects (through ``course.handles``) and hands the answers to the checks here, which
compare them with what the grader computes itself. The judge loads this package (``course
grade``, the Gradescope zip's engine, ``course nbgrader``); it never ships to students, so public
tests stay self-contained and import only ``course`` and torch.

The modules here are shared: each check is used by the tests of several notebooks, and its message
to the student is written with it, once.

- :mod:`.hints`: failures that say what is wrong (:class:`Hint`), shown in place of a test's message
- :mod:`.answers`: plain answers (shapes, numbers, True or False)
- :mod:`.properties`: what every right answer has (rows that add up to one, a batch whose sentences
  are alone, shuffled sites...)
- :mod:`.causality`: does the output at a position depend on a later position (by values, by gradient)
- :mod:`.work`: the gates (does the answer do the work?); :mod:`.reference`: the course's own pieces;
  :mod:`.params`: the pieces' parameters

A notebook's own checks, used by its tests alone, are in its own package: :mod:`.nb01` (the word
frequencies, training measured by the check), :mod:`.nb08` (the causal switch handed on,
WriteLeftToRight), :mod:`.nb09` (the chapter's GPT, the networks 09's own checks are tried on).
"""
from __future__ import annotations

from .hints import Hint

__all__ = ["Hint"]
