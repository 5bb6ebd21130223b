"""Aliasing answers: a question's forbidden piece put into an object under another name, and the
graded definition reading it back through a name the reading never links to the store. Each keeps
none of its question's points (cap 0: the follow reaches the piece) or its row is held for a person
(``suspicious code``: :mod:`course.rules.whole` does not take the object whole).

Built from the shortcut suite (:mod:`autograder.shortcuts`): for each question whose rules name a
piece and each definition it grades, the first shortcut answer is the payload, its graded name
renamed ``Smuggled``; each form below stores ``Smuggled`` into the notebook's ``box`` (or another
object) by a way of its own, and the graded definition reads it back (``class Block(box["k"]):
pass``, ``def NormalizeByHand(*a, **k): return box["k"](*a, **k)``, ``gpt_params = box["k"]``).

``python -m autograder.aliasing NN_name`` grades them through the real ``course grade`` and prints
each answer's points, cap and status (tests/autograder/test_aliasing.py does it for every notebook).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from . import exercise_rules, shortcuts
from .assignment import ASSIGNMENTS
from .degenerate import Degenerate
from .status import kind_of

# form -> (how Smuggled is stored, how the graded definition reads it back)
FORMS: dict[str, tuple[str, str]] = {
    "return_value": ("def shelf():\n    return box\n\n\nshelf()['k'] = Smuggled\n", "box['k']"),
    "walrus": ("(alias := box)['k'] = Smuggled\n", "box['k']"),
    "match_capture": ("match box:\n    case alias:\n        alias['k'] = Smuggled\n", "box['k']"),
    "setdefault_helper": ("def slot(d):\n    return d.setdefault('k', [])\n\n\nslot(box).append(Smuggled)\n",
                          "box['k'][0]"),
    "method_through_self": ("class Keeper:\n    def __init__(self, d):\n        self.d = d\n\n"
                            "    def put(self, v):\n        self.d['k'] = v\n\n\nKeeper(box).put(Smuggled)\n",
                            "box['k']"),
    "subscript_callable": ("pair = (box, dict.update)\npair[1](pair[0], k=Smuggled)\n", "box['k']"),
    "class_attribute": ("class Shelf:\n    items = {}\n\n\ndef items():\n    return Shelf.items\n\n\n"
                        "items()['k'] = Smuggled\n", "Shelf.items['k']"),
    "generator": ("any(d.update(k=Smuggled) for d in [box])\n", "box['k']"),
    "default_argument": ("def put(d=box):\n    d['k'] = Smuggled\n\n\nput()\n", "box['k']"),
    "closure": ("def outer():\n    d = box\n\n    def inner():\n        d['k'] = Smuggled\n"
                "    return inner\n\n\nouter()()\n", "box['k']"),
    "decorator": ("", "box['k']"),
    "function_attribute": ("def tag():\n    return None\n\n\ndef tags():\n    return tag\n\n\n"
                           "tags().k = Smuggled\n", "tag.k"),
}
# forms that change the graded class itself, the notebook's own answer, under a name the follow
# does not link (a class payload only): its forward becomes the piece's
ON_THE_CLASS: dict[str, str] = {
    "class_through_return": "def graded():\n    return {N}\n\n\ngraded().forward = Smuggled.forward\n",
    "class_through_local": "def patch():\n    c = {N}\n    c.forward = Smuggled.forward\n\n\npatch()\n",
}
# the decorator form stores through a helper that keeps what it decorates under a local name
DECORATOR = "def register(f):\n    d = box\n    d['k'] = f\n    return f\n\n\n"


def _graded(name: str, kind: str, read: str) -> str:
    """The graded definition that reads the piece back: a class, a function or a value, as the
    payload defines ``name``."""
    if kind == "class":
        return f"class {name}({read}):\n    pass\n"
    if kind == "def":
        return f"def {name}(*args, **kwargs):\n    return {read}(*args, **kwargs)\n"
    return f"{name} = {read}\n"


def _kind(code: str, name: str) -> str:
    if re.search(rf"^class {re.escape(name)}\b", code, re.MULTILINE):
        return "class"
    if re.search(rf"^def {re.escape(name)}\b", code, re.MULTILINE):
        return "def"
    return "value"


def payloads(notebook: str) -> list[Degenerate]:
    """The first shortcut answer of each question and graded name (the piece, reached directly)."""
    first: dict[tuple[str, str], Degenerate] = {}
    for d in shortcuts.shortcuts(notebook):
        first.setdefault((d.question, d.replaces), d)
    return list(first.values())


def answer(payload: Degenerate, form: str) -> str:
    """One aliasing answer's code: the payload under the name ``Smuggled``, stored by ``form``, and
    the graded definition reading it back."""
    name = payload.replaces
    kind = _kind(payload.code, name)
    smuggled = re.sub(rf"\b{re.escape(name)}\b", "Smuggled", payload.code).strip() + "\n"
    store, read = FORMS[form]
    if form == "decorator":
        if kind in ("class", "def"):
            smuggled = re.sub(r"^(class|def) Smuggled\b", r"@register\n\1 Smuggled", smuggled, count=1,
                              flags=re.MULTILINE)
        else:
            store = "register(Smuggled)\n"
        smuggled = DECORATOR + smuggled
    return f"box = {{}}\n\n{smuggled}\n\n{store}\n\n{_graded(name, kind, read)}"


def aliasing(notebook: str) -> list[Degenerate]:
    """Every aliasing answer of ``notebook``: each form for each payload, cap 0 on its question."""
    if not exercise_rules.load(ASSIGNMENTS / notebook):
        return []
    out = []
    for payload in payloads(notebook):
        for form in FORMS:
            label = f"{form}_{payload.replaces}"
            out.append(Degenerate(notebook, payload.question, label, payload.replaces, 0.0,
                                  answer(payload, form)))
        name = payload.replaces
        if _kind(payload.code, name) == "class":
            smuggled = re.sub(rf"\b{re.escape(name)}\b", "Smuggled", payload.code).strip()
            own = shortcuts._solution_cell(notebook, name).strip()
            for form, store in ON_THE_CLASS.items():
                code = f"{smuggled}\n\n\n{own}\n\n\n{store.replace('{N}', name)}"
                out.append(Degenerate(notebook, payload.question, f"{form}_{name}", name, 0.0, code))
    return out


def contained(row: dict, d: Degenerate) -> str | None:
    """None when the answer keeps at most its cap or its row is held for a person; else why not."""
    got = float(row.get(d.question) or 0)
    status = row.get("grading_status", "")
    if got <= d.cap + 1e-9 or (kind_of(status).flagged and d.question in status):
        return None
    return f"{d.notebook} {d.question} {d.name}: {got:g} points, cap {d.cap:g} [{status}]"


def main(argv: list[str] | None = None) -> int:
    import csv
    import tempfile

    from . import degenerate, mutants
    from .api import grade
    from .config import GradeConfig

    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m autograder.aliasing NN_name", file=sys.stderr)
        return 2
    notebook = argv[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submissions"
        folder.mkdir()
        answers = {f"alias__{d.question}__{d.name}": d for d in aliasing(notebook)}
        written = mutants.write_notebooks(folder, answers, degenerate.degenerate_notebook)
        grade(GradeConfig(submissions=(folder,), assignment=notebook, out=Path(tmp) / "grades", workers=2,
                          progress=False, similarity=False))
        with open(Path(tmp) / "grades" / "grades.csv", newline="") as f:
            rows = {Path(r["file"]).stem: r for r in csv.DictReader(f)}
    bad = 0
    for stem, d in sorted(written.items()):
        why = contained(rows[stem], d)
        bad += why is not None
        print(("OVER  " if why else "ok    ") + f"{d.question} {d.name}: {rows[stem].get(d.question)} "
              f"[{rows[stem]['grading_status'][:120]}]")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
