"""A submitted notebook's code cells, as the grader reads them: the same reading in the process that
runs the notebook (:mod:`autograder.runner`) and in the judge (:mod:`autograder.judge`), which reads
the notebook again on its own side to find its ``grader.check`` cells and what the rules forbid.
"""
from __future__ import annotations

import json
import re
from typing import Any, cast

SETUP_MARK = "# GIVEN: setup."   # the first line of every notebook's setup cell after its Colab title
# Colab's form title (instructor/build.py writes one first in the setup cell, so that Colab shows
# the cell collapsed): a comment everywhere else; an earlier release's setup cell has none
COLAB_TITLE = re.compile(r"[ \t]*#@title\b[^\n]*(?:\n|$)")


def is_setup(src: str) -> bool:
    """Whether a code cell's source is a setup cell: SETUP_MARK first, after a Colab title if any."""
    src = src.lstrip()
    title = COLAB_TITLE.match(src)
    return (src[title.end():].lstrip() if title else src).startswith(SETUP_MARK)


def setup_cell(given_code: list[str]) -> str | None:
    """The blank notebook's setup cell, from its code cells."""
    return next((src for src in given_code if is_setup(src)), None)


def read_notebook(data: bytes, setup: str | None = None) -> tuple[list[dict] | None, str | None]:
    """The code cells of a notebook, or why it cannot be graded.

    With `setup`, the notebook's own setup cell (its first code cell that :func:`is_setup`)
    is replaced by this one: the setup cell is the course's, not an answer, and a notebook
    released by an earlier build has an earlier version of it (which would otherwise read as the
    student's own code); whatever a student writes into it is not run."""
    if not data.strip():
        return None, "unreadable notebook: empty file"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, "unreadable notebook: not valid JSON (not UTF-8 text)"
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError):
        return None, "unreadable notebook: not valid JSON"
    if not isinstance(nb, dict):
        return None, "unreadable notebook: not a notebook (JSON is not an object)"
    major = nb.get("nbformat")
    if "worksheets" in nb or (isinstance(major, int) and major < 4):
        old = major if isinstance(major, int) else 3
        return None, f"unreadable notebook: nbformat {old} is too old (needs 4)"
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return None, "unreadable notebook: not a notebook (no cells)"
    if major is not None and major != 4:
        return None, f"unreadable notebook: unknown nbformat {major!r}"
    code, problem = _code_cells(cells)
    if code is None:
        return None, problem
    if setup is not None:
        first = next((c for c in code if is_setup(c["source"])), None)
        if first is not None:
            first["source"] = setup
    return code, None


def _code_cells(cells: list) -> tuple[list[dict] | None, str | None]:
    """The code cells of a notebook's cells: number (from 1), source, whether ``otter_ignore`` skips
    it; or why not (a cell that is not one, a source that is not text)."""
    code: list[dict[str, Any]] = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            return None, f"unreadable notebook: cell {i + 1} is not a cell"
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        if isinstance(src, list):
            if not all(isinstance(s, str) for s in src):
                return None, f"unreadable notebook: cell {i + 1} has a bad source"
            src = "".join(src)
        if not isinstance(src, str):
            return None, f"unreadable notebook: cell {i + 1} has a bad source"
        meta = cast(dict, cell.get("metadata")) if isinstance(cell.get("metadata"), dict) else {}
        tags = cast(list, meta.get("tags")) if isinstance(meta.get("tags"), list) else []
        code.append({"index": i + 1, "source": src, "ignore": "otter_ignore" in tags})
    return code, None


CHECK_RE = re.compile(r"""\.check\(\s*["']([A-Za-z_][\w\-]*)["']""")  # as in assignment.py
