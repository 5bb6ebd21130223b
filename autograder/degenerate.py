"""Degenerate answers: answers that do no work, and the most points each may keep.

A mutant (autograder/mutants.py) is a plausible bug; a degenerate answer is what a student who
wants points without work would hand in: zeros, ones, a constant, uniform attention weights, the
input echoed back, fresh random numbers of the right shape, tensors without values (``meta``),
``return True``, a hard-coded number. Such an answer keeps at most the points of the checks that
look only at shapes (its question's *cap*); every point above the cap must be earned by an answer
that depends on its inputs and parameters the way the exercise asks.

Each notebook has a spec, autograder/assignments/NN_name/degenerate.py, beside its tests. It defines
``QUESTIONS``: for every auto-graded question, either a :class:`Question` (the name whose cell is
replaced, the cap and what the cap keeps, and the degenerate answers) or a string saying why the
question has none (a number worked out by hand, say, whose right value *is* the answer).

Answers come two ways:

- ``template``: the answer's code with the faked results written as ``FAKE(like, shape)`` (any
  output) and ``FAKE_WEIGHTS(like, shape)`` (an output whose rows should be probabilities).
  ``like`` is an input tensor (its dtype and device are used; ``echo`` copies its numbers) and
  ``shape`` a tuple. One answer per kind in :data:`KINDS` is generated from it.
- ``variants``: {name: code} written out in full (``return True``, ``start_loss = 6.93``, a module
  whose parameters are never used, ...).

``python -m autograder.degenerate NN_name [NAME...]`` grades them through the real ``course grade``
and prints each answer's points against its cap; the suite (tests/autograder/test_degenerate.py)
does the same for every notebook in CI.
"""
from __future__ import annotations

import ast
import runpy
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import mutants
from .assignment import ASSIGNMENTS

# How each kind fakes a result: (any output, an output whose rows should be probabilities).
# ``like`` gives the dtype and device; ``shape`` is a tuple.
KINDS: dict[str, tuple[str, str]] = {
    "zeros": ("torch.zeros(shape, dtype=_float(like), device=like.device)",
              "torch.zeros(shape, dtype=_float(like), device=like.device)"),
    "ones": ("torch.ones(shape, dtype=_float(like), device=like.device)",
             "torch.ones(shape, dtype=_float(like), device=like.device)"),
    "constant": ("torch.full(shape, 0.37, dtype=_float(like), device=like.device)",
                 "torch.full(shape, 0.37, dtype=_float(like), device=like.device)"),
    "uniform": ("torch.zeros(shape, dtype=_float(like), device=like.device)",
                "torch.full(shape, 1.0 / shape[-1], dtype=_float(like), device=like.device)"),
    "echo": ("_echo(like, shape)",
             "torch.full(shape, 1.0 / shape[-1], dtype=_float(like), device=like.device)"),
    "random": ("torch.randn(shape, dtype=_float(like), device=like.device)",
               "torch.rand(shape, dtype=_float(like), device=like.device).softmax(-1)"),
    "meta": ("torch.empty(shape, dtype=_float(like), device='meta')",
             "torch.empty(shape, dtype=_float(like), device='meta')"),
}

HELPERS = '''
def _float(like):
    return like.dtype if like.is_floating_point() else torch.float32


def _echo(like, shape):
    """The input's own numbers: site by site where the shapes allow, else repeated to fill."""
    x = like.to(_float(like))
    if x.dim() == len(shape) and tuple(x.shape[:-1]) == tuple(shape[:-1]) and x.shape[-1] > 0:
        return x.index_select(-1, torch.arange(shape[-1], device=x.device) % x.shape[-1])
    if x.dim() + 1 == len(shape) and tuple(x.shape) == tuple(shape[:-1]):
        return x.unsqueeze(-1).expand(*shape).clone()
    n = 1
    for s in shape:
        n *= s
    flat = x.reshape(-1)
    if flat.numel() == 0:
        return torch.zeros(shape, dtype=x.dtype, device=x.device)
    return flat.repeat(-(-n // flat.numel()))[:n].reshape(shape)
'''


@dataclass(frozen=True)
class Question:
    replaces: str                    # the top-level name whose cell is replaced
    cap: float                       # the most points a degenerate answer may keep
    keeps: str                       # which checks the cap stands for (the shape checks)
    template: str = ""               # code with FAKE / FAKE_WEIGHTS, one answer per kind
    kinds: tuple[str, ...] = tuple(KINDS)
    variants: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Degenerate:
    notebook: str
    question: str
    name: str
    replaces: str
    cap: float
    code: str


def load_spec(notebook: str) -> dict[str, Question | str]:
    path = ASSIGNMENTS / notebook / "degenerate.py"
    if not path.exists():
        return {}
    spec = runpy.run_path(str(path), init_globals={"Question": Question})
    questions = spec.get("QUESTIONS")
    if not isinstance(questions, dict):
        raise ValueError(f"{path}: no QUESTIONS dict")
    return questions


def answer_code(template: str, kind: str) -> str:
    """The template with FAKE / FAKE_WEIGHTS made of one kind (the helpers put in front)."""
    values, weights = KINDS[kind]
    fakes = (f"\n\ndef FAKE(like, shape):\n    return {values}\n\n\n"
             f"def FAKE_WEIGHTS(like, shape):\n    return {weights}\n")
    return HELPERS.strip() + fakes + "\n\n" + textwrap.dedent(template).strip() + "\n"


def degenerates(notebook: str) -> list[Degenerate]:
    out = []
    for q, spec in load_spec(notebook).items():
        if isinstance(spec, str):
            continue
        if spec.template:
            for kind in spec.kinds:
                out.append(Degenerate(notebook, q, kind, spec.replaces, spec.cap,
                                      answer_code(spec.template, kind)))
        for name, code in spec.variants.items():
            out.append(Degenerate(notebook, q, name, spec.replaces, spec.cap,
                                  textwrap.dedent(code).strip() + "\n"))
    return out


def binds(source: str) -> set[str]:
    """Top-level names a cell binds (def, class, assignment)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def degenerate_notebook(d: Degenerate) -> nbformat.NotebookNode:
    """The solution notebook with the last cell that binds ``d.replaces`` swapped for ``d.code``."""
    return mutants.swap_last(d.notebook, lambda source: d.replaces in binds(source), d.code,
                             f"{d.notebook}: no cell binds {d.replaces}")


def submissions(notebook: str) -> dict[str, Degenerate]:
    """{file stem: degenerate answer} of one notebook."""
    return {f"{notebook}__{d.question}__{d.name}": d for d in degenerates(notebook)}


def write_submissions(notebook: str, out: Path, answers: list[Degenerate] | None = None
                      ) -> dict[str, Degenerate]:
    """Each answer (default: the notebook's degenerate answers) as a solution notebook with its cell
    swapped in, in ``out``; {file stem: answer}."""
    chosen = submissions(notebook) if answers is None else {
        f"{notebook}__{d.question}__{d.name}": d for d in answers}
    return mutants.write_notebooks(out, chosen, degenerate_notebook)


def auto_questions(notebook: str) -> list[str]:
    import json
    info = json.loads((ASSIGNMENTS / notebook / "assignment.json").read_text())
    return [q["name"] for q in info["questions"] if not q["manual"]]


def missing_questions(notebook: str) -> list[str]:
    """Auto-graded questions the spec says nothing about."""
    spec = load_spec(notebook)
    return [q for q in auto_questions(notebook) if q not in spec]


def over_cap(rows: dict[str, dict], written: dict[str, Degenerate]) -> list[str]:
    """One line per degenerate answer that kept more than its cap (or has no row)."""
    bad = []
    for stem, d in sorted(written.items()):
        row = rows.get(stem)
        if row is None:
            bad.append(f"{stem}: no row")
            continue
        got = float(row.get(d.question) or 0)
        if got > d.cap + 1e-9:
            bad.append(f"{d.notebook} {d.question} {d.name}: {got:g} points, cap {d.cap:g} "
                       f"[{row['grading_status']}]")
    return bad


def main(argv: list[str] | None = None) -> int:
    import tempfile

    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__)
        return 2
    notebook, wanted = argv[0], set(argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "submissions"
        written = mutants.write_notebooks(subs, {s: d for s, d in submissions(notebook).items()
                                                 if not wanted or d.name in wanted or d.question in wanted},
                                          degenerate_notebook)
        rows = mutants.grade_folder(notebook, subs, Path(tmp) / "grades")
        passed = {s: [name for name, ok in mutants.case_verdicts(Path(tmp) / "grades" / "results", s) if ok]
                  for s in rows}
    for stem, d in sorted(written.items()):
        row = rows[stem]
        got = float(row.get(d.question) or 0)
        mark = "ok " if got <= d.cap + 1e-9 else "BAD"
        kept = [t for t in passed[stem] if t.startswith(d.question + ":")]
        print(f"{mark} {d.question:4} {d.name:24} {got:g} of cap {d.cap:g} [{row['grading_status']}]"
              + (f"  passed: {', '.join(kept)}" if kept else ""))
    missing = missing_questions(notebook)
    if missing:
        print(f"no spec for {', '.join(missing)}")
    bad = over_cap(rows, written)
    print(f"{len(written) - len(bad)}/{len(written)} under their caps")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
