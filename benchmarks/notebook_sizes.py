"""How big each notebook is for a student: its points, its questions and how much there is to read
(a measurement, not a test).

    .venv/bin/python benchmarks/notebook_sizes.py [--rev REV]
    .venv/bin/python benchmarks/notebook_sizes.py --compare REV_A REV_B

Prints one markdown table, a row per notebook and a total row: the graded points (checked
automatically / read by the instructor / total) and the number of questions, from the master's raw
``# BEGIN QUESTION`` cells (solutions/NN_name.ipynb: ``points:``, a number or a list that adds up,
and ``manual: true``), then the words of the question statements, those of them a student reads before
the statement's "How it is checked" (a collapsed ``<details>`` block, or a paragraph that begins so),
and the words of all the markdown of the student notebook (notebooks/NN_name.ipynb). A question
statement is a markdown cell that begins with
``**Question`` once its HTML comments (Otter's ``<!-- BEGIN QUESTION -->``) are taken out.

A word is a whitespace-separated token that holds a letter or a digit, counted after HTML comments
are removed and HTML tags (``<details>``, ``<summary>``, ...) are stripped, their text kept; markdown
and LaTeX are not rendered, so ``$w_{ij}$`` or `` `Attention(q, k, v)` `` count as what they split
into.

The notebooks are course.toml's ``[course] notebooks`` at that revision, or, where it has none, the
notebooks/*.ipynb files there. Without ``--rev`` the working tree is read; ``--rev REV`` reads every
file with ``git show REV:path``. ``--compare REV_A REV_B`` prints one table with ``before → after``
in each column; ``.`` stands for the working tree in either place. ``-``: the file a number comes
from (the master or the student notebook) is not there. A note follows the table where a student
notebook has another number of statements than its master has questions.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

import tomllib
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKING_TREE = "."

BEGIN_QUESTION = re.compile(r"\s*#\s*BEGIN\s+QUESTION\b", re.IGNORECASE)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
HOW_CHECKED = re.compile(r"<details>.*?</details>|^How it is checked.*", re.DOTALL | re.MULTILINE)
COLUMNS = ("notebook", "automatic points", "instructor points", "total points", "questions",
           "question words", "of them before how it is checked", "markdown words")


@dataclass(frozen=True)
class Size:
    """One notebook's numbers, in the order of ``COLUMNS`` (after the name); None where the file they
    come from is not there (a master without its built student notebook, or the other way round)."""

    automatic: float | None
    manual: float | None
    total: float | None
    questions: int | None
    question_words: int | None
    lead_words: int | None
    markdown_words: int | None


def read(rev: str, path: str) -> str | None:
    """The text of ``path`` (relative to the repository) at ``rev`` (``.``: the working tree), or None
    where it is not there."""
    if rev == WORKING_TREE:
        file = ROOT / path
        return file.read_text(encoding="utf-8") if file.is_file() else None
    done = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True)
    return done.stdout.decode("utf-8") if done.returncode == 0 else None


def notebook_names(rev: str) -> list[str]:
    """The course's notebooks at ``rev``: course.toml's list, else the stems of notebooks/*.ipynb."""
    config = read(rev, "course.toml")
    if config is not None:
        listed = tomllib.loads(config).get("course", {}).get("notebooks")
        if listed:
            return [str(name) for name in listed]
    if rev == WORKING_TREE:
        files = [p.name for p in (ROOT / "notebooks").glob("*.ipynb")]
    else:
        done = subprocess.run(["git", "ls-tree", "--name-only", f"{rev}:notebooks"], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        files = [name for name in done.stdout.splitlines() if name.endswith(".ipynb")]
    return sorted(name.removesuffix(".ipynb") for name in files)


def cells(text: str) -> list[dict[str, Any]]:
    return list(json.loads(text).get("cells", []))


def source(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def words(text: str) -> int:
    """The words of a piece of markdown, as the module's docstring counts them."""
    text = HTML_TAG.sub(" ", HTML_COMMENT.sub(" ", text))
    return sum(any(ch.isalnum() for ch in token) for token in text.split())


def points(master: str) -> tuple[float, float, int]:
    """(automatic points, instructor's points, questions) of a master notebook's text."""
    automatic = manual = 0.0
    questions = 0
    for cell in cells(master):
        text = source(cell)
        if cell.get("cell_type") != "raw" or not BEGIN_QUESTION.match(text):
            continue
        config = yaml.safe_load(text.split("\n", 1)[1] if "\n" in text else "") or {}
        given = config.get("points") or 0
        value = float(sum(given) if isinstance(given, list) else given)
        questions += 1
        if config.get("manual", False):
            manual += value
        else:
            automatic += value
    return automatic, manual, questions


def is_statement(text: str) -> bool:
    return HTML_COMMENT.sub("", text).lstrip().startswith("**Question")


def size(rev: str, name: str) -> Size:
    """One notebook's numbers at ``rev``."""
    master = read(rev, f"solutions/{name}.ipynb")
    student = read(rev, f"notebooks/{name}.ipynb")
    automatic = manual = together = None
    questions = None
    if master is not None:
        automatic, manual, questions = points(master)
        together = automatic + manual
    statements = lead = everything = None
    if student is not None:
        markdown = [source(c) for c in cells(student) if c.get("cell_type") == "markdown"]
        statements = sum(words(text) for text in markdown if is_statement(text))
        lead = sum(words(HOW_CHECKED.sub(" ", text)) for text in markdown if is_statement(text))
        everything = sum(words(text) for text in markdown)
    return Size(automatic, manual, together, questions, statements, lead, everything)


def sizes(rev: str) -> dict[str, Size]:
    return {name: size(rev, name) for name in notebook_names(rev)}


def total(found: dict[str, Size]) -> Size:
    """The sum of each column over the notebooks that have it."""
    columns = zip(*(astuple(s) for s in found.values()), strict=True) if found else [()] * 7
    sums = [sum(x for x in column if x is not None) for column in columns]
    return Size(float(sums[0]), float(sums[1]), float(sums[2]), *(int(x) for x in sums[3:]))


def number(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else f"{value:,}"


def table(rows: list[tuple[str, list[str]]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" + "---:|" * (len(COLUMNS) - 1)]
    lines += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows]
    return "\n".join(lines)


def one(rev: str) -> str:
    found = sizes(rev)
    rows = [(name, [number(x) for x in astuple(s)]) for name, s in found.items()]
    rows.append(("**total**", [number(x) for x in astuple(total(found))]))
    return table(rows)


def change(before: Size | None, after: Size | None) -> list[str]:
    """Each column as ``before → after`` (just the number where it did not change)."""
    a = [number(x) for x in astuple(before)] if before else ["-"] * len(COLUMNS[1:])
    b = [number(x) for x in astuple(after)] if after else ["-"] * len(COLUMNS[1:])
    return [x if x == y else f"{x} → {y}" for x, y in zip(a, b, strict=True)]


def compare(rev_a: str, rev_b: str) -> str:
    before, after = sizes(rev_a), sizes(rev_b)
    names = list(after) + [name for name in before if name not in after]
    rows = [(name, change(before.get(name), after.get(name))) for name in names]
    rows.append(("**total**", change(total(before), total(after))))
    return table(rows)


def mismatches(rev: str) -> list[str]:
    """A line for each notebook whose student notebook has another number of question statements than
    its master has questions (a statement this script does not see, or one too many)."""
    lines = []
    for name in notebook_names(rev):
        master, student = read(rev, f"solutions/{name}.ipynb"), read(rev, f"notebooks/{name}.ipynb")
        if master is None or student is None:
            continue
        found = sum(c.get("cell_type") == "markdown" and is_statement(source(c)) for c in cells(student))
        if found != points(master)[2]:
            lines.append(f"{name} at {rev}: {points(master)[2]} questions in the master, {found} "
                         f"statements (**Question ...) in the student notebook")
    return lines


def label(rev: str) -> str:
    if rev == WORKING_TREE:
        return "the working tree"
    done = subprocess.run(["git", "log", "-1", "--format=%h %ad %s", "--date=iso", rev], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return f"`{rev}` ({done.stdout.strip()[:100]})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--rev", default=WORKING_TREE, help="a git revision (default: the working tree)")
    what.add_argument("--compare", nargs=2, metavar=("REV_A", "REV_B"),
                      help="one table, REV_A → REV_B (. is the working tree)")
    args = parser.parse_args(argv)
    for rev in args.compare or [args.rev]:
        if rev != WORKING_TREE and subprocess.run(["git", "rev-parse", "--verify", "--quiet",
                                                   f"{rev}^{{commit}}"], cwd=ROOT,
                                                  capture_output=True).returncode != 0:
            print(f"notebook_sizes: {rev!r} is not a revision of {ROOT}", file=sys.stderr)
            return 2
    if args.compare:
        rev_a, rev_b = args.compare
        print(f"Before: {label(rev_a)}; after: {label(rev_b)}.\n")
        print(compare(rev_a, rev_b))
    else:
        print(f"At {label(args.rev)}.\n")
        print(one(args.rev))
    notes = [line for rev in (args.compare or [args.rev]) for line in mismatches(rev)]
    if notes:
        print("\nNote: " + "; ".join(notes) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
