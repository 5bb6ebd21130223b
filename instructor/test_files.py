"""The grader's test files, written as the masters wrote their test cells.

`otter assign` writes each question's test file from the master's test cells through
`ast.unparse`: comments go, long lines stay long, quotes change. The build writes the grader's
copy (autograder/assignments/NN_name/tests/) again with each test function exactly as its cell has
it (checked to be the same code as otter's), so that the tests read as written and ruff checks them
as their authors wrote them (`make lint` covers them; a decorator made long by its failure message
says so). The students' public tests (notebooks/tests/) stay as otter wrote them.
"""
from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import nbformat

from .masters import cell_source
from .nbgrader.source import parse_test_cell

LINE = 110                        # ruff's line length: a longer decorator says it is one
_QUESTION = re.compile(r"\s*#\s*BEGIN\s+QUESTION", re.IGNORECASE)
_TESTS = re.compile(r"\s*#\s*(BEGIN|END)\s+TESTS", re.IGNORECASE)


def test_cells(nb: nbformat.NotebookNode) -> dict[str, list[str]]:
    """{question: the sources of its test cells, in order} of a master."""
    import yaml

    found: dict[str, list[str]] = {}
    question, inside = None, False
    for cell in nb.cells:
        text = cell_source(cell)
        if cell.cell_type == "raw" and _QUESTION.match(text):
            question = str(yaml.safe_load(text.split("\n", 1)[1])["name"])
        elif cell.cell_type == "raw" and _TESTS.match(text):
            inside = _TESTS.match(text).group(1).upper() == "BEGIN"
        elif inside and cell.cell_type == "code" and question:
            found.setdefault(question, []).append(text)
    return found


def _decorator(call: ast.Call) -> str:
    """`@test_case(...)` on one line (a failure message is one string, whatever its length)."""
    kw = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    args = [f"points={kw['points']!r}", f"hidden={kw['hidden']!r}"]
    args += [f"{key}={kw[key]!r}" for key in ("success_message", "failure_message")
             if kw.get(key) is not None]
    line = f"@test_case({', '.join(args)})"
    return line + "  # noqa: E501" if len(line) > LINE else line


def rewrite(otter_text: str, cells: list[str]) -> str:
    """The test file `otter_text` (otter's) with each test function as the cell it came from."""
    tree = ast.parse(otter_text)
    functions = {}
    for source in cells:
        _config, head, fname, _call = parse_test_cell(source)
        functions[fname] = head.strip("\n")
    header, cases = [], []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            ours = functions[node.name]
            theirs = ast.get_source_segment(otter_text, node)
            if ast.dump(ast.parse(ours)) != ast.dump(ast.parse(textwrap.dedent(theirs))):
                raise ValueError(f"{node.name}: the test cell and otter's test differ")
            cases.append(_decorator(node.decorator_list[0]) + "\n" + ours)
        else:
            header.append(ast.get_source_segment(otter_text, node))
    head = "\n".join(header[:1]) + "\n\n" + "\n".join(header[1:2]) + "\n\n" + "\n".join(header[2:])
    return head + "\n\n\n" + "\n\n\n".join(cases) + "\n"


def rewrite_folder(folder: Path, nb: nbformat.NotebookNode) -> None:
    """Rewrite every test file otter wrote in `folder` (qN.py) from the master `nb`."""
    cells = test_cells(nb)
    for path in sorted(folder.glob("*.py")):
        path.write_text(rewrite(path.read_text(), cells.get(path.stem, [])))
