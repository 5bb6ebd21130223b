"""Each exercise's own rules: what the definitions a question grades may not use, beside the page's
rules. The course's own answer to the exercise is no way in (``course.tinydenoiser``'s
``DenoiserBlock`` for a Block, ``course.training.TrainLoop`` for a training loop), and what the text
says to do by hand is done by hand (06 q1's layer norm, the parameter counts worked out with pencil
and paper).

Each notebook's lists are hand-written in ``autograder/assignments/NN_name/rules.toml``, beside its
tests, one table a question (the keys are explained at the top of ``01_no_talking/rules.toml``).
:func:`load` reads them for :mod:`autograder.assignment`, which hands each question's to the judge
with its tests; :func:`verdict` reads the notebook's code against them (:mod:`course.rules.exercise`,
statically, on the grader's side, on every route: ``course grade``, the Gradescope zip and ``course
nbgrader`` all grade with the judge). A question whose definitions use what they may not loses every
point: its tests do not run, and each fails with a hint in the student's words.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import tomllib

RULES_FILE = "rules.toml"
# how the message of a case failed by these rules starts (the feedback shows it, hidden case or not)
MARK = "Not allowed: "
LISTS = ("pieces", "calls", "given", "methods")          # what the judge reads
# what only people and the suite read: the text the lists come from, the answers built from them
NOTES = ("from_text", "not_rules", "stand_ins", "answers")


class RulesError(ValueError):
    """A rules file that cannot be read, or that names what it should not."""


def read_file(folder: Path) -> dict[str, dict[str, Any]]:
    """The notebook's rules file as it is ({question: table}); {} when it has none."""
    path = folder / RULES_FILE
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RulesError(f"{path}: {exc}") from exc
    for q, table in data.items():
        if not isinstance(table, dict):
            raise RulesError(f"{path}: {q} is not a table")
        unknown = set(table) - {"names", "hint", *LISTS, *NOTES}
        if unknown:
            raise RulesError(f"{path}: [{q}] has unknown keys {sorted(unknown)}")
        if any(table.get(k) for k in LISTS) and not (table.get("names") and table.get("hint")):
            raise RulesError(f"{path}: [{q}] lists what it may not use but no names or no hint")
    return data


def load(folder: Path) -> dict[str, dict[str, Any]]:
    """{question: what the judge needs} for the questions whose rules list something: plain data
    (names, hint and the lists), which travels to the judge with the question's tests."""
    found = {}
    for q, table in read_file(folder).items():
        lists = {k: [str(x) for x in table.get(k, [])] for k in LISTS}
        if any(lists.values()):
            found[q] = {"names": [str(x) for x in table["names"]], "hint": str(table["hint"]), **lists}
    return found


def verdict(cells: list[str], template: list[str] | None, rules: dict[str, Any] | None,
            question: str = "this question") -> str | None:
    """None when the question's definitions keep to its rules (or it has none); else the message
    each of its test cases fails with. Code that keeps the reading from telling what they use (an
    attribute by a computed name there, code from strings anywhere, ...) breaks them too."""
    if not rules:
        return None
    from course.rules import Exercise, exercise_unread, exercise_uses

    exercise = Exercise(names=tuple(rules["names"]), pieces=tuple(rules.get("pieces", ())),
                        calls=tuple(rules.get("calls", ())), given=tuple(rules.get("given", ())),
                        methods=tuple(rules.get("methods", ())))
    found = exercise_uses(cells, exercise, template)
    if not found:
        hidden = exercise_unread(cells, exercise, template)
        if hidden:
            return (MARK + f"the grader cannot tell what {question}'s code uses, so it cannot check it: "
                    f"your code {hidden[0]}.")
        return None
    line = f" (in the line `{found[0].line[:100]}`)" if found[0].line else ""
    return MARK + rules["hint"].replace("{name}", found[0].shown) + line + "."


def held(cells: list[str], template: list[str] | None, rules: dict[str, Any] | None,
         question: str = "this question") -> list[str]:
    """Why the reading cannot tell whole what the question's definitions use (a notebook-level
    object they read that other code may change under another name, an attribute stored onto an
    object reached other than by a name): each a line of the row's ``suspicious code`` status, which
    holds its points, as earned, for a person. Empty when the question has no rules or all is read."""
    if not rules:
        return []
    from course.rules import Exercise, exercise_held

    exercise = Exercise(names=tuple(rules["names"]), pieces=tuple(rules.get("pieces", ())),
                        calls=tuple(rules.get("calls", ())), given=tuple(rules.get("given", ())),
                        methods=tuple(rules.get("methods", ())))
    names = ", ".join(exercise.names)
    return [f"{question} ({names}) {why}" for why in exercise_held(cells, exercise, template)]


_QUOTED = re.compile(r"\(in the line `(.*)`\)$")


def owners(found: dict[str, list[str]], cells: list[str], names: dict[str, list[str]]) -> list[str]:
    """Each reason of ``found`` ({question: its :func:`held` lines}) once, under the question it is
    about: one whose graded definitions' own cells hold the line it quotes (a Block's forward is
    Block's question, though GPT, which uses Block, reaches it too); else the first that found it."""
    from course.rules.reading import stripped

    by_reason: dict[str, list[tuple[str, str]]] = {}
    for q, lines in found.items():
        for line in lines:
            reason = line.split(") ", 1)[1] if ") " in line else line
            by_reason.setdefault(reason, []).append((q, line))
    out = []
    for reason, where in by_reason.items():
        quoted = _QUOTED.search(reason)
        own = [line for q, line in where if quoted and any(
            set(names.get(q, ())) & _binds(stripped(c)) and quoted.group(1) in stripped(c) for c in cells)]
        out.append((own or [where[0][1]])[0])
    return out


def _binds(source: str) -> set[str]:
    """The names a cell binds at its top level (def, class, assignment)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names
