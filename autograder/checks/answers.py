"""Answers that are plain values: shapes, lists of numbers, True or False, counts.

Each function takes what ``student(...)`` gave back (plain data of the built-in types) and either
returns it in the one form the check compares, or fails with a message that says what the answer
should have been. The forms a public check needs too live in the student package
(:mod:`course.checking`), since a public check runs where this package is not installed.
"""
from __future__ import annotations

from course.checking import anchored, is_truth, numbers, truth

__all__ = ["anchored", "is_truth", "numbers", "truth"]

