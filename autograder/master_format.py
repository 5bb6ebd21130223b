"""The master notebook format, read in one place.

A master (solutions/NN_name.ipynb) is a notebook in Otter's assign format as this course writes it
(CONTRIBUTING.md, "A master notebook"): a raw ``# ASSIGNMENT CONFIG`` cell, then the lesson, where
raw cells mark regions (``# BEGIN QUESTION`` with the question's YAML config, ``# BEGIN SOLUTION``,
``# BEGIN TESTS``, each closed by its ``# END ...``), and answer cells mark lines (``# BEGIN PROMPT``
... ``# END PROMPT`` for what students see, ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` and a trailing
``# SOLUTION`` for what they write).

The build (student notebooks, tests, ``assignment.json``), the nbgrader export, the release's list of
answers it gives away and the similarity check's master answers all read a master through this
module. It lives in the grader, not the tooling, because the similarity check reads masters too.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

# raw cells
ASSIGNMENT_CONFIG = re.compile(r"\s*#\s*ASSIGNMENT\s+CONFIG", re.IGNORECASE)
RAW_MARK = re.compile(r"\s*#\s*(BEGIN|END)\s+(QUESTION|SOLUTION|TESTS|PROMPT)\b", re.IGNORECASE)
# lines of an answer cell
SOLUTION_LINE_MARK = re.compile(r"^\s*#\s*(BEGIN|END)\s+SOLUTION(\s+NO\s+PROMPT)?\s*$", re.IGNORECASE)
SOLUTION_BLOCK_START = re.compile(r"^\s*#\s*BEGIN\s+SOLUTION", re.IGNORECASE)
SOLUTION_BLOCK_END = re.compile(r"^\s*#\s*END\s+SOLUTION", re.IGNORECASE)
PROMPT_BEGIN = re.compile(r"^\s*#\s*BEGIN\s+PROMPT\s*$", re.IGNORECASE)
PROMPT_END = re.compile(r"^\s*#\s*END\s+PROMPT\s*$", re.IGNORECASE)
SOLUTION_TAIL = re.compile(r"\s*#\s*SOLUTION\s*$", re.IGNORECASE)
SOLUTION_TAIL_NO_PROMPT = re.compile(r"\s*#\s*SOLUTION\s+NO\s+PROMPT\s*$", re.IGNORECASE)
# a solution block's first line, its indent captured
SOLUTION_BEGIN_LINE = re.compile(r"^(\s*)#\s*BEGIN\s+SOLUTION(\s+NO\s+PROMPT)?\s*$", re.IGNORECASE)
SOLUTION_END_LINE = re.compile(r"^\s*#\s*END\s+SOLUTION\s*$", re.IGNORECASE)
PROMPT_LINE_MARK = re.compile(r"^\s*#\s*(BEGIN|END)\s+PROMPT\s*$", re.IGNORECASE)
# a test cell's config, and a hidden one
TEST_CONFIG = re.compile(r'^\s*"""\s*#\s*BEGIN\s+TEST\s+CONFIG\s*\n(.*?)'
                         r'^\s*"""\s*#\s*END\s+TEST\s+CONFIG[^\n]*\n?',
                         re.IGNORECASE | re.MULTILINE | re.DOTALL)
HIDDEN = re.compile(r"^\s*hidden:\s*true\s*$", re.IGNORECASE | re.MULTILINE)


def cell_source(cell: Any) -> str:
    """A cell's text (nbformat keeps it as a string or a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def cell_tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


@dataclass(frozen=True)
class Mark:
    """A raw marker cell: ``what`` is BEGIN or END, ``kind`` QUESTION, SOLUTION, TESTS or PROMPT."""
    what: str
    kind: str


def raw_mark(cell: Any) -> Mark | None:
    """The marker a raw cell is (its first line), or None."""
    if cell.get("cell_type") != "raw":
        return None
    found = RAW_MARK.match(cell_source(cell).strip().split("\n", 1)[0])
    return Mark(found.group(1).upper(), found.group(2).upper()) if found else None


def is_assignment_config(cell: Any) -> bool:
    return cell.get("cell_type") == "raw" and bool(ASSIGNMENT_CONFIG.match(cell_source(cell).strip()))


@dataclass(frozen=True)
class Question:
    """A ``# BEGIN QUESTION`` cell's config. ``points`` is as written: None, a number or a list (one
    per test case)."""
    name: str
    points: Any = None
    manual: bool = False
    all_or_nothing: bool = False

    @property
    def total(self) -> float:
        if isinstance(self.points, list):
            return float(sum(self.points))
        return float(self.points or 0)


def question(cell: Any) -> Question:
    """The config of a ``# BEGIN QUESTION`` raw cell."""
    import yaml
    config = yaml.safe_load(cell_source(cell).split("\n", 1)[1]) or {}
    return Question(name=str(config["name"]), points=config.get("points"),
                    manual=bool(config.get("manual", False)),
                    all_or_nothing=bool(config.get("all_or_nothing", False)))


def questions(cells: Iterable[Any]) -> list[Question]:
    """The questions of a master, in order."""
    return [question(c) for c in cells if (m := raw_mark(c)) and m == Mark("BEGIN", "QUESTION")]


@dataclass(frozen=True)
class Place:
    """Where a cell of a master lies: in which question (or none) and which region of it (``solution``,
    ``tests`` or None)."""
    index: int
    cell: Any
    question: Question | None
    region: str | None


def walk(cells: Iterable[Any]) -> Iterator[Place]:
    """Every cell that is not a marker or the assignment config, with where it lies."""
    current: Question | None = None
    region: str | None = None
    for i, cell in enumerate(cells):
        mark = raw_mark(cell)
        if mark is None:
            if not is_assignment_config(cell):
                yield Place(i, cell, current, region)
        elif mark.kind == "QUESTION":
            current = question(cell) if mark.what == "BEGIN" else None
        elif mark.kind in ("SOLUTION", "TESTS"):
            region = mark.kind.lower() if mark.what == "BEGIN" else None


def split_solution(source: str) -> tuple[str, str]:
    """An answer cell split into (the answer's lines, the lines students see: prompts and
    scaffolding)."""
    answer, shown, block = [], [], None
    for line in source.splitlines():
        if PROMPT_BEGIN.match(line):
            block = "prompt"
        elif PROMPT_END.match(line):
            block = None
        elif SOLUTION_BLOCK_START.match(line):
            block = "solution"
        elif SOLUTION_BLOCK_END.match(line):
            block = None
        elif block == "solution" or (block is None and SOLUTION_TAIL.search(line)):
            answer.append(SOLUTION_TAIL.sub("", line))
        else:
            shown.append(line)
    return "\n".join(answer), "\n".join(shown)


def answer_code(source: str) -> str:
    """An answer cell's code as the answer reads: prompt blocks and solution markers removed."""
    lines, in_prompt = [], False
    for line in source.splitlines():
        if PROMPT_BEGIN.match(line):
            in_prompt = True
        elif PROMPT_END.match(line):
            in_prompt = False
        elif not in_prompt and not SOLUTION_LINE_MARK.match(line):
            lines.append(SOLUTION_TAIL.sub("", line))
    return "\n".join(lines).strip("\n")
