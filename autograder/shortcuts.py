"""Shortcut answers: the course's own pieces standing in for an exercise, and what its text says to
do without. Each keeps nothing of its question (cap 0): the exercise's rules
(:mod:`autograder.exercise_rules`) take every point of it.

A degenerate answer (:mod:`autograder.degenerate`) does no work; a shortcut does the work with
what the exercise may not use. Both come from the notebook's grading folder: the shortcuts from its
``rules.toml``, two ways:

- generated, for each piece a question lists under ``stand_ins`` (a list, or a table by the name it
  stands in for) and each definition it grades: a class of its own that subclasses the piece, one
  that wraps an object of it, one whose ``forward`` delegates to the piece's, one with the piece's
  ``forward`` copied onto it (a function: one that calls the piece, and the piece under the
  exercise's name);
- written out in full, under ``[qN.answers]`` (pieces renamed or rebuilt from the course's own
  classes, and one answer for each of the PyTorch functions a "by hand" question lists).

``python -m autograder.shortcuts NN_name [NAME...]`` grades them through the real ``course grade``
and prints each answer's points against its cap (tests/autograder/test_shortcuts.py does it for every
notebook, and for a sample on the Gradescope zip and ``course nbgrader``).
"""
from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

from . import degenerate, exercise_rules, mutants
from .assignment import ASSIGNMENTS
from .degenerate import Degenerate

CLASS_KINDS = {
    "subclass": "class {N}({P}):\n    pass\n",
    "wrapper": ("class {N}(nn.Module):\n    def __init__(self, *args, **kwargs):\n"
                "        super().__init__()\n        self.inner = {P}(*args, **kwargs)\n\n"
                "    def forward(self, *args, **kwargs):\n        return self.inner(*args, **kwargs)\n"),
    "delegation": ("{OWN}\n\nclass {N}(Own{N}):\n    def forward(self, *args, **kwargs):\n"
                   "        return {P}.forward(self, *args, **kwargs)\n"),
    "copy": "{OWN}\n\nclass {N}(Own{N}):\n    forward = {P}.forward\n",
}
FUNCTION_KINDS = {
    "wrapper": "def {N}(*args, **kwargs):\n    return {P}(*args, **kwargs)\n",
    "alias": "{N} = {P}\n",
}


def _solution_cell(notebook: str, name: str) -> str:
    nb = mutants.solution_notebook(notebook)
    cells = [c.source for c in nb.cells if c.cell_type == "code" and name in degenerate.binds(c.source)]
    if not cells:
        raise ValueError(f"{notebook}: no cell binds {name}")
    return cells[-1]


def _piece(piece: str) -> tuple[str, str]:
    """(the import line, the name the code uses) for a piece of the course (``course.x.Y``); none
    for a name of the notebook (``page.Block``)."""
    if piece.startswith("course."):
        module, _, name = piece.rpartition(".")
        return f"from {module} import {name}\n\n", name
    return "", piece


def generated(notebook: str, question: str, table: dict) -> list[Degenerate]:
    """The answers made from each stand-in of the question, for each name it may stand in for."""
    stand_ins = table.get("stand_ins", [])
    by_name = stand_ins if isinstance(stand_ins, dict) else {n: stand_ins for n in table.get("names", [])}
    out = []
    for name, pieces in by_name.items():
        own_source = _solution_cell(notebook, name)
        is_class = re.search(rf"^class {re.escape(name)}\b", own_source, re.MULTILINE) is not None
        own = re.sub(rf"\b{re.escape(name)}\b", f"Own{name}", own_source)
        for piece in pieces:
            line, used = _piece(piece)
            for kind, template in (CLASS_KINDS if is_class else FUNCTION_KINDS).items():
                code = line + template.replace("{OWN}", own).replace("{N}", name).replace("{P}", used)
                label = f"{used.rpartition('.')[2]}_{kind}" + (f"_{name}" if len(by_name) > 1 else "")
                out.append(Degenerate(notebook, question, label, name, 0.0, code))
    return out


def written(notebook: str, question: str, table: dict) -> list[Degenerate]:
    """The answers the rules file writes out in full (each replaces the graded name it binds)."""
    out = []
    for label, code in table.get("answers", {}).items():
        code = textwrap.dedent(code).strip() + "\n"
        bound = [n for n in table["names"] if n in degenerate.binds(code)]
        if not bound:
            raise ValueError(f"{notebook} {question} {label}: binds none of {table['names']}")
        out.append(Degenerate(notebook, question, label, bound[0], 0.0, code))
    return out


def shortcuts(notebook: str) -> list[Degenerate]:
    """Every shortcut answer of ``notebook``, generated and written out."""
    out = []
    for q, table in exercise_rules.read_file(ASSIGNMENTS / notebook).items():
        out += generated(notebook, q, table) + written(notebook, q, table)
    return out


def by_hand(notebook: str, question: str) -> bool:
    """Whether the question's rules come from its text (calls and methods it should do without)
    rather than from the course's own pieces."""
    table = exercise_rules.read_file(ASSIGNMENTS / notebook).get(question, {})
    return bool(table.get("calls") or table.get("methods"))


def main(argv: list[str] | None = None) -> int:
    import tempfile

    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__)
        return 2
    notebook, wanted = argv[0], set(argv[1:])
    answers = [d for d in shortcuts(notebook) if not wanted or d.name in wanted or d.question in wanted]
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "submissions"
        chosen = degenerate.write_submissions(notebook, subs, answers)
        rows = mutants.grade_folder(notebook, subs, Path(tmp) / "grades")
    for stem, d in sorted(chosen.items()):
        row = rows[stem]
        got = float(row.get(d.question) or 0)
        mark = "ok " if got <= d.cap + 1e-9 else "BAD"
        print(f"{mark} {d.question:4} {d.name:36} {got:g} of cap {d.cap:g} [{row['grading_status'][:60]}]")
    bad = degenerate.over_cap(rows, chosen)
    print(f"{len(chosen) - len(bad)}/{len(chosen)} under their caps")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
