"""The master notebooks in solutions/, read: their names in course order, their answers (the cells
tagged ``reference``, the solution lines of answer cells) and what their student notebooks show.

Read by the build (:mod:`instructor.build`), the nbgrader export (:mod:`instructor.nbgrader.source`),
the release's list of the answers it gives away (:mod:`instructor.release`) and the tests.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"

NAMES = ["01_no_talking", "02_with_position", "03_attention", "04_head", "05_multihead",
         "06_block", "07_my_transformer", "08_causal", "09_gpt"]

_SOLUTION_MARKER = re.compile(r"^\s*#\s*(BEGIN|END)\s+SOLUTION(\s+NO\s+PROMPT)?\s*$", re.IGNORECASE)
_PROMPT_BEGIN = re.compile(r"^\s*#\s*BEGIN\s+PROMPT\s*$", re.IGNORECASE)
_PROMPT_END = re.compile(r"^\s*#\s*END\s+PROMPT\s*$", re.IGNORECASE)
_SOLUTION_TAIL = re.compile(r"\s*#\s*SOLUTION\s*$", re.IGNORECASE)


def cell_tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def cell_source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def answer_code(source: str) -> str:
    """A solution cell's code as the answer reads: prompt blocks and solution markers removed."""
    lines, in_prompt = [], False
    for line in source.splitlines():
        if _PROMPT_BEGIN.match(line):
            in_prompt = True
        elif _PROMPT_END.match(line):
            in_prompt = False
        elif not in_prompt and not _SOLUTION_MARKER.match(line):
            lines.append(_SOLUTION_TAIL.sub("", line))
    return "\n".join(lines).strip("\n")


def read_master(name: str) -> nbformat.NotebookNode:
    return nbformat.read(SOLUTIONS / f"{name}.ipynb", as_version=4)


def masters() -> list[str]:
    """The masters that exist, in course order."""
    return [n for n in NAMES if (SOLUTIONS / f"{n}.ipynb").exists()]


def reference_code(name: str) -> list[str]:
    """The answers of one master that later notebooks re-use (its cells tagged `reference`)."""
    return [answer_code(cell_source(c)) for c in read_master(name).cells
            if c.cell_type == "code" and "reference" in cell_tags(c)]


def earlier_reference_code(name: str) -> list[str]:
    """Reference answers of every master before `name`, in order; a later one replaces an earlier
    definition of the same name (08's causal Attention replaces 03's)."""
    return [code for earlier in NAMES[:NAMES.index(name)] if (SOLUTIONS / f"{earlier}.ipynb").exists()
            for code in reference_code(earlier)]


def defined_names(code: str) -> list[str]:
    """The names a piece of reference code defines at its top level (def, class, assignment), in order."""
    import ast

    names: list[str] = []
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            found = []
        names += [n for n in found if n not in names]
    return names


def latest_definitions(blocks: list[str]) -> list[str]:
    """The code blocks whose names are not all defined again by a later block (08's causal
    MyTransformer makes 07's unnecessary), in their order."""
    names = [set(defined_names(code)) for code in blocks]
    return [code for i, code in enumerate(blocks)
            if not names[i] or not names[i] <= set().union(*names[i + 1:])]


def in_solution(nb: nbformat.NotebookNode) -> Iterator[tuple[nbformat.NotebookNode, bool]]:
    """Every cell of a master but the BEGIN/END SOLUTION raw cells, and whether it lies between one
    BEGIN SOLUTION and its END SOLUTION."""
    inside = False
    for cell in nb.cells:
        text = cell_source(cell)
        if cell.cell_type == "raw" and re.match(r"\s*#\s*BEGIN\s+SOLUTION", text, re.IGNORECASE):
            inside = True
        elif cell.cell_type == "raw" and re.match(r"\s*#\s*END\s+SOLUTION", text, re.IGNORECASE):
            inside = False
        else:
            yield cell, inside


def answer_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The cells of a master that hold its answers: every cell between a BEGIN SOLUTION and an END
    SOLUTION raw cell (code: otter removes its marked lines, `split_solution`; markdown: removed
    whole), and the code cells tagged `reference`."""
    return [cell for cell, inside in in_solution(nb)
            if inside or (cell.cell_type == "code" and "reference" in cell_tags(cell))]


def split_solution(source: str) -> tuple[str, str]:
    """A marked code cell split into (answer lines, lines students see: prompts and scaffolding)."""
    answer, shown, block = [], [], None
    for line in source.splitlines():
        if _PROMPT_BEGIN.match(line):
            block = "prompt"
        elif _PROMPT_END.match(line):
            block = None
        elif re.match(r"^\s*#\s*BEGIN\s+SOLUTION", line, re.IGNORECASE):
            block = "solution"
        elif re.match(r"^\s*#\s*END\s+SOLUTION", line, re.IGNORECASE):
            block = None
        elif block == "solution" or (block is None and _SOLUTION_TAIL.search(line)):
            answer.append(_SOLUTION_TAIL.sub("", line))
        else:
            shown.append(line)
    return "\n".join(answer), "\n".join(shown)


def shown_text(nb: nbformat.NotebookNode) -> str:
    """Everything of a master that its students are shown: all but the answers and the hidden test
    cases (the public ones go out with the release, in notebooks/tests/)."""
    shown, tests = [], False
    for cell, inside in in_solution(nb):
        text = cell_source(cell)
        if cell.cell_type == "raw" and re.match(r"\s*#\s*(BEGIN|END)\s+TESTS", text, re.IGNORECASE):
            tests = bool(re.match(r"\s*#\s*BEGIN", text, re.IGNORECASE))
        elif tests and re.search(r"^\s*hidden:\s*true\s*$", text, re.IGNORECASE | re.MULTILINE):
            continue
        elif cell.cell_type == "code":
            shown.append(split_solution(text)[1])
        elif cell.cell_type != "raw" and not inside:
            shown.append(text)
    return "\n".join(shown)
