"""Alternative right answers: every point that was earned must be kept.

The mutants (:mod:`autograder.mutants`), the degenerate answers (:mod:`autograder.degenerate`) and
the shortcuts (:mod:`autograder.shortcuts`) are wrong answers that must lose points. This module is
the other half: answers that do what the page asks, written the way another student would, each of
which must get full marks on every automatic question, be graded ``ok`` and not be flagged.

Answers come two ways:

- generated from the solution's own answer cells (the cells of the built solution notebook that
  hold a ``SOLUTION`` and bind a name an automatic question's tests read), by rewrites of the
  syntax tree that keep the maths: every local variable and parameter renamed, ``a @ b`` as
  ``torch.matmul`` (and ``torch.einsum`` where the operands are matrices), ``.transpose(-2, -1)``
  as ``.mT`` or ``.transpose(-1, -2)``, the softmax in each of its three spellings, type hints,
  docstrings and comments added, the work moved into a helper function of the student's own, and
  a ``%%time`` magic on the cell (see :data:`REWRITES`);
- written by hand, one file an answer in autograder/assignments/NN_name/correct/, with a header
  like a mutant's::

      # question: q1
      # replaces: Attention            (one name, or several separated by commas)
      # why: einsum and the softmax by hand

  The code goes in the cell of the first name; the cells of the others are emptied.

``python -m autograder.alternatives NN_name [LABEL...]`` grades them through the real
``course grade`` and prints each answer's points against full marks; the suite
(tests/autograder/test_alternatives.py) does the same for every notebook.
"""
from __future__ import annotations

import ast
import copy
import json
import re
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

import nbformat

from . import degenerate, mutants
from .assignment import ASSIGNMENTS
from .status import Status, kind_of

if TYPE_CHECKING:
    class _MethodCall(ast.Call):
        """For the type checker: a call of a method (``x.transpose(...)``)."""
        func: ast.Attribute

SOLUTION_TAG = "otter_assign_solution_cell"
IGNORE_TAG = "otter_ignore"
PROMPT = re.compile(r"# BEGIN PROMPT\n.*?# END PROMPT\n?", re.DOTALL)

# Where ``@`` may become an einsum over matrices: the shapes of the operands cannot be read from the
# code, and ``...ij,...jk->...ik`` is wrong for a vector (a matrix times a bias, say).
EINSUM_OK = {("03_attention", "Attention"), ("08_causal", "Attention"), ("09_gpt", "SelfAttention")}

# Type hints by parameter name, for the parameters without a default to read the type from.
INT_NAMES = {"dim", "head_dim", "heads", "layers", "vocab_size", "max_length", "steps", "L", "context"}
MODULE_NAMES = {"net", "model", "attn", "gpt", "module"}
HINTS = {**dict.fromkeys(INT_NAMES, "int"), **dict.fromkeys(MODULE_NAMES, "nn.Module"),
         "start": "str", "temperature": "float", "p": "float", "cfg": "'Config'"}


@dataclass(frozen=True)
class Alternative:
    notebook: str
    question: str
    label: str
    replaces: tuple[str, ...]     # the graded names whose cells the code replaces (the first holds it)
    code: str
    origin: str                   # "generated" or "written"
    why: str = ""


# ---- the solution's answer cells ---------------------------------------------------------------
def auto_questions(notebook: str) -> list[str]:
    return degenerate.auto_questions(notebook)


def test_names(notebook: str) -> dict[str, set[str]]:
    """{question: the notebook names its test functions take} of every automatic question."""
    out = {}
    for q in auto_questions(notebook):
        path = ASSIGNMENTS / notebook / "tests" / f"{q}.py"
        tree = ast.parse(path.read_text()) if path.exists() else ast.Module(body=[], type_ignores=[])
        out[q] = {a.arg for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                  and n.name.startswith("test_") for a in n.args.args}
    return out


def keyword_names(notebook: str) -> set[str]:
    """Keyword names the tests and the notebook pass: a parameter of that name keeps it."""
    sources = [p.read_text() for p in sorted((ASSIGNMENTS / notebook / "tests").glob("*.py"))]
    sources += [c.source for c in mutants.solution_notebook(notebook).cells if c.cell_type == "code"]
    names = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        names |= {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg}
    return names


def without_prompt(source: str) -> str:
    return PROMPT.sub("", source)


def _answer_cell(cell: nbformat.NotebookNode) -> bool:
    tags = cell.metadata.get("tags") or []
    return cell.cell_type == "code" and SOLUTION_TAG in tags and IGNORE_TAG not in tags


def answer_cells(notebook: str) -> list[tuple[str, tuple[str, ...], str]]:
    """(question, graded names, source without the prompt) of every answer cell: a solution cell,
    graded, that holds a SOLUTION and binds a name some automatic question's tests read."""
    names = test_names(notebook)
    out = []
    for cell in mutants.solution_notebook(notebook).cells:
        if not _answer_cell(cell) or "SOLUTION" not in cell.source:
            continue
        source = without_prompt(cell.source)
        bound = degenerate.binds(source)
        for q, read in names.items():
            graded = tuple(sorted(bound & read))
            if graded:
                out.append((q, graded, source))
                break
    return out


def cell_of(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """The last graded answer cell of the solution notebook that binds ``name``."""
    cells = [c for c in nb.cells if _answer_cell(c) and name in degenerate.binds(without_prompt(c.source))]
    if not cells:
        raise ValueError(f"no answer cell binds {name}")
    return cells[-1]


def alternative_notebook(alt: Alternative) -> nbformat.NotebookNode:
    """The solution notebook with the cell of ``alt.replaces[0]`` swapped for ``alt.code`` and the
    cells of the other names it replaces emptied."""
    nb = mutants.solution_notebook(alt.notebook)
    cells = [cell_of(nb, name) for name in alt.replaces]
    for cell in cells[1:]:
        if cell is not cells[0]:
            cell.source = "# (written in the cell above)\n"
    cells[0].source = alt.code
    return nb


# ---- the rewrites ------------------------------------------------------------------------------
def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """The cell's top-level functions and the methods of its top-level classes."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out.append(node)
        elif isinstance(node, ast.ClassDef):
            out += [n for n in node.body if isinstance(n, ast.FunctionDef)]
    return out


def _all_args(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
    a = fn.args
    return a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]


def _locals(fn: ast.FunctionDef, keep: set[str]) -> set[str]:
    """Names bound inside ``fn`` (its parameters, what its body and nested scopes bind), less
    ``self``, ``cls``, declared globals and the parameters in ``keep`` (keyword names callers pass)."""
    declared = {n for node in ast.walk(fn) if isinstance(node, (ast.Global, ast.Nonlocal))
                for n in node.names}
    own = {a.arg for a in _all_args(fn)} - keep
    inner = set()
    for node in ast.walk(fn):
        if node is fn:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            inner.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner.add(node.name)
            inner |= {a.arg for a in _all_args(node)}
        elif isinstance(node, ast.Lambda):
            inner |= {a.arg for a in _all_args(node)}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            inner.add(node.name)
    return (own | inner) - declared - {"self", "cls"}


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.mapping.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.mapping.get(node.arg, node.arg)
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.mapping.get(node.name, node.name)
        self.generic_visit(node)
        return node


def rename(tree: ast.Module, keep: set[str]) -> bool:
    """Every local variable and parameter of every function and method renamed (``my_x``)."""
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    changed = False
    for fn in _functions(tree):
        names = _locals(fn, keep)
        mapping = {}
        for name in sorted(names):
            new = f"my_{name}"
            while new in used:
                new += "_"
            used.add(new)
            mapping[name] = new
        if mapping:
            # the body and the parameters only: the function's own name is what the page grades
            for part in fn.body + fn.args.defaults + [d for d in fn.args.kw_defaults if d]:
                _Rename(mapping).visit(part)
            for a in _all_args(fn):
                a.arg = mapping.get(a.arg, a.arg)
            changed = True
    return changed


def _neg(node: ast.expr) -> int | None:
    """The value of an integer literal (``-1`` is a unary minus in the tree), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _is_last_two_swap(node: ast.AST) -> TypeGuard[_MethodCall]:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == "transpose" and len(node.args) == 2 and not node.keywords \
        and (_neg(node.args[0]), _neg(node.args[1])) == (-2, -1)


def _torch(attr: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name("torch", ast.Load()), attr=attr, ctx=ast.Load())


class _Matmul(ast.NodeTransformer):
    def __init__(self, einsum: bool) -> None:
        self.einsum = einsum
        self.changed = False

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, ast.MatMult):
            return node
        self.changed = True
        if not self.einsum:
            return ast.Call(_torch("matmul"), [node.left, node.right], [])
        if _is_last_two_swap(node.right):            # a @ b^T: the dot products of rows
            return ast.Call(_torch("einsum"), [ast.Constant("...id,...jd->...ij"), node.left,
                                               node.right.func.value], [])
        return ast.Call(_torch("einsum"), [ast.Constant("...ij,...jk->...ik"), node.left, node.right], [])


def matmul(tree: ast.Module, einsum: bool, graded: set[str] | None = None) -> bool:
    """``a @ b`` as ``torch.matmul(a, b)``, or as an einsum in the functions of ``graded``."""
    changed = False
    for node in tree.body:
        if einsum and getattr(node, "name", None) not in (graded or set()):
            continue
        t = _Matmul(einsum)
        t.visit(node)
        changed |= t.changed
    return changed


class _Transpose(ast.NodeTransformer):
    def __init__(self, to: str) -> None:
        self.to = to
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if not _is_last_two_swap(node):
            return node
        self.changed = True
        if self.to == "mT":
            return ast.Attribute(value=node.func.value, attr="mT", ctx=ast.Load())
        node.args = [ast.UnaryOp(ast.USub(), ast.Constant(1)), ast.UnaryOp(ast.USub(), ast.Constant(2))]
        return node


def transpose(tree: ast.Module, to: str) -> bool:
    t = _Transpose(to)
    t.visit(tree)
    return t.changed


def _softmax_parts(node: ast.Call) -> tuple[str, ast.expr, ast.expr] | None:
    """(form, input, dim) of a softmax call: ``torch.softmax``, ``F.softmax`` or ``x.softmax``."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "softmax"):
        return None
    owner = node.func.value
    form = owner.id if isinstance(owner, ast.Name) and owner.id in ("torch", "F") else "method"
    args = list(node.args) if form != "method" else [owner, *node.args]
    dim = next((k.value for k in node.keywords if k.arg == "dim"), args[1] if len(args) > 1 else None)
    if dim is None or any(k.arg not in ("dim",) for k in node.keywords) or len(args) > 2:
        return None
    return form, args[0], dim


class _Softmax(ast.NodeTransformer):
    def __init__(self, to: str) -> None:
        self.to = to
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        parts = _softmax_parts(node)
        if parts is None or parts[0] == self.to:
            return node
        self.changed = True
        _, x, dim = parts
        if self.to == "F":
            return ast.Call(ast.Attribute(ast.Name("F", ast.Load()), "softmax", ast.Load()), [x],
                            [ast.keyword("dim", dim)])
        if self.to == "method":
            return ast.Call(ast.Attribute(x, "softmax", ast.Load()), [], [ast.keyword("dim", dim)])
        return ast.Call(_torch("softmax"), [x, dim], [])


def softmax(tree: ast.Module, to: str) -> bool:
    t = _Softmax(to)
    t.visit(tree)
    return t.changed


def _hint(a: ast.arg, default: ast.expr | None) -> str:
    if isinstance(default, ast.Constant) and type(default.value) in (int, float, bool, str):
        return type(default.value).__name__
    return HINTS.get(a.arg, "torch.Tensor")


def hints(tree: ast.Module) -> bool:
    """Type hints on every parameter and a docstring on every def that has none."""
    changed = False
    for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        a = fn.args
        positional = a.posonlyargs + a.args
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        pairs = list(zip(positional, defaults, strict=True)) + list(zip(a.kwonlyargs, a.kw_defaults,
                                                                          strict=True))
        for arg, default in pairs:
            if arg.annotation is None and arg.arg not in ("self", "cls"):
                arg.annotation = ast.parse(_hint(arg, default), mode="eval").body
                changed = True
        if fn.returns is None and fn.name in ("__init__", "forward"):
            fn.returns = ast.parse("None" if fn.name == "__init__" else "torch.Tensor", mode="eval").body
            changed = True
        if not (fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant)
                and isinstance(fn.body[0].value.value, str)):
            fn.body.insert(0, ast.Expr(ast.Constant(f"{fn.name}: my own version, as the page asks.")))
            changed = True
    return changed


def commented(code: str) -> str:
    """Comments and blank lines a student adds: a heading, and a note before every return."""
    lines = ["# My answer.", "# (Written out step by step, with notes.)", ""]
    for line in code.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("return ") or stripped == "return":
            indent = line[:len(line) - len(stripped)]
            lines += ["", f"{indent}# what comes back:"]
        lines.append(line)
    return "\n".join(lines) + "\n\n# (end of my answer)\n"


def _call_like(fn: ast.FunctionDef, callee: str) -> ast.Call:
    """A call of ``callee`` that passes on every parameter of ``fn`` as it came."""
    a = fn.args
    args: list[ast.expr] = [ast.Name(x.arg, ast.Load()) for x in a.posonlyargs + a.args]
    if a.vararg:
        args.append(ast.Starred(ast.Name(a.vararg.arg, ast.Load()), ast.Load()))
    keywords = [ast.keyword(x.arg, ast.Name(x.arg, ast.Load())) for x in a.kwonlyargs]
    if a.kwarg:
        keywords.append(ast.keyword(None, ast.Name(a.kwarg.arg, ast.Load())))
    return ast.Call(ast.Name(callee, ast.Load()), args, keywords)


def _uses_super(fn: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Name) and n.id in ("super", "__class__") for n in ast.walk(fn))


def helper(tree: ast.Module, graded: set[str]) -> bool:
    """The work of each graded definition moved into a helper function of the student's own that the
    definition calls: a function's body, a class's ``forward``, a value's expression."""
    body: list[ast.stmt] = []
    changed = False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in graded:
            inner = copy.deepcopy(node)
            inner.name, inner.decorator_list = f"{node.name.lower()}_steps", []
            node.body = [ast.Return(_call_like(node, inner.name))]
            body += [inner, node]
            changed = True
        elif isinstance(node, ast.ClassDef) and node.name in graded:
            for i, method in enumerate(node.body):
                if isinstance(method, ast.FunctionDef) and method.name == "forward" \
                        and not _uses_super(method):
                    inner = copy.deepcopy(method)
                    inner.name, inner.decorator_list = f"{node.name.lower()}_forward", []
                    node.body[i] = ast.FunctionDef(
                        "forward", method.args, [ast.Return(_call_like(method, inner.name))],
                        method.decorator_list, method.returns, lineno=0)
                    body.append(inner)
                    changed = True
            body.append(node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in graded:
            name = f"compute_{node.targets[0].id}"
            body.append(ast.FunctionDef(name, ast.arguments([], [], None, [], [], None, []),
                                        [ast.Return(node.value)], [], None, lineno=0))
            body.append(ast.Assign(node.targets, ast.Call(ast.Name(name, ast.Load()), [], []), lineno=0))
            changed = True
        else:
            body.append(node)
    tree.body = body
    return changed


def _unparse(tree: ast.Module) -> str:
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def rewrites(notebook: str, graded: tuple[str, ...], source: str, keep: set[str]) -> dict[str, str]:
    """{rewrite: code} of one answer cell: only the rewrites that change something."""
    out: dict[str, str] = {}

    def emit(label: str, change: Callable[[ast.Module], bool]) -> None:
        tree = ast.parse(source)
        if change(tree):
            out[label] = _unparse(tree)

    einsum = {n for n in graded if (notebook, n) in EINSUM_OK}
    emit("rename", lambda t: rename(t, keep))
    emit("matmul", lambda t: matmul(t, einsum=False))
    if einsum:
        emit("einsum", lambda t: matmul(t, einsum=True, graded=einsum))
    emit("mT", lambda t: transpose(t, "mT"))
    emit("transpose_swapped", lambda t: transpose(t, "swapped"))
    for form in ("F", "method", "torch"):
        # the default binds this turn's form (mypy cannot infer a lambda with a default)
        emit(f"softmax_{form}", lambda t, form=form: softmax(t, form))  # type: ignore[misc]
    emit("hints", hints)
    out["comments"] = commented(_unparse(ast.parse(source)))
    emit("helper", lambda t: helper(t, set(graded)))
    out["time_magic"] = "%%time\n" + source.strip() + "\n"

    def everything(tree: ast.Module) -> bool:
        # hints first: they are read off the parameters' names before the renaming
        done = [hints(tree), matmul(tree, einsum=False), transpose(tree, "mT"), softmax(tree, "F"),
                rename(tree, keep)]
        return sum(done) > 2
    emit("all_at_once", everything)
    return out


def generated(notebook: str) -> list[Alternative]:
    """The rewrites of every answer cell of ``notebook``."""
    keep = keyword_names(notebook)
    out = []
    for question, graded, source in answer_cells(notebook):
        for rewrite, code in rewrites(notebook, graded, source, keep).items():
            out.append(Alternative(notebook, question, f"{question}_{graded[0]}_{rewrite}", graded, code,
                                   "generated", rewrite))
    return out


# ---- the answers written by hand ---------------------------------------------------------------
def read_written(path: Path) -> Alternative:
    header: dict[str, str]
    body: list[str]
    header, body = {}, []
    for line in path.read_text().splitlines():
        key = line[2:].split(":", 1)[0].strip() if line.startswith("# ") and ":" in line else None
        if not body and key in ("question", "replaces", "why"):
            header[key] = line.split(":", 1)[1].strip()
        else:
            body.append(line)
    if {"question", "replaces"} - header.keys():
        raise ValueError(f"{path}: the header needs question and replaces")
    replaces = tuple(n.strip() for n in header["replaces"].split(","))
    return Alternative(path.parent.parent.name, header["question"], path.stem, replaces,
                       textwrap.dedent("\n".join(body)).strip() + "\n", "written", header.get("why", ""))


def written(notebook: str) -> list[Alternative]:
    return [read_written(p) for p in sorted((ASSIGNMENTS / notebook / "correct").glob("*.py"))]


def alternatives(notebook: str) -> list[Alternative]:
    return generated(notebook) + written(notebook)


# ---- grading -----------------------------------------------------------------------------------
def submissions(notebook: str, answers: list[Alternative] | None = None) -> dict[str, Alternative]:
    """{file stem: answer} of one notebook (default: all its alternatives)."""
    chosen = alternatives(notebook) if answers is None else answers
    return {f"{notebook}__{a.origin}__{a.label}": a for a in chosen}


def write_submissions(notebook: str, out: Path, answers: list[Alternative] | None = None
                      ) -> dict[str, Alternative]:
    return mutants.write_notebooks(out, submissions(notebook, answers), alternative_notebook)


def full_marks(notebook: str) -> dict[str, float]:
    info = json.loads((ASSIGNMENTS / notebook / "assignment.json").read_text())
    return {q["name"]: float(q["points"]) for q in info["questions"] if not q["manual"]}


def shortfalls(notebook: str, row: dict | None, results: Path | None = None, stem: str = "") -> list[str]:
    """What a graded alternative lost: one line per question short of full marks (with what its
    failed cases said), and one for a status other than ``ok``; none for full marks."""
    if row is None:
        return ["no row"]
    bad = []
    status = row.get("grading_status", "")
    if kind_of(status) is not Status.OK:
        bad.append(f"status {status!r}")
    for q, points in full_marks(notebook).items():
        got = float(row.get(q) or 0)
        if got < points - 1e-9:
            told = mutants.told(results, stem, q) if results else []
            said = " | ".join(t for t in told if t)
            bad.append(f"{q}: {got:g} of {points:g}" + (f" ({said})" if said else ""))
    return bad


def grade(notebook: str, root: Path, answers: list[Alternative] | None = None, workers: int = 2
          ) -> tuple[dict[str, Alternative], dict[str, dict]]:
    """Write the alternatives of ``notebook`` under ``root/submissions`` and grade them in one batch
    (``root/grades``); ({stem: answer}, {stem: grades.csv row})."""
    import csv

    from .api import grade as grade_batch
    from .config import GradeConfig

    written_ = write_submissions(notebook, root / "submissions", answers)
    grade_batch(GradeConfig(submissions=(root / "submissions",), assignment=notebook, out=root / "grades",
                            workers=workers, progress=False, similarity=False))
    with open(root / "grades" / "grades.csv", newline="") as f:
        rows = {Path(row["file"]).stem: row for row in csv.DictReader(f)}
    return written_, rows


def main(argv: list[str] | None = None) -> int:
    import tempfile
    import time

    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__)
        return 2
    notebook, wanted = argv[0], set(argv[1:])
    answers = [a for a in alternatives(notebook) if not wanted or a.label in wanted or a.question in wanted]
    full = sum(full_marks(notebook).values())
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        chosen, rows = grade(notebook, Path(tmp), answers)
        took = time.monotonic() - start
        bad = 0
        for stem, a in sorted(chosen.items(), key=lambda item: (item[1].origin, item[1].label)):
            row = rows.get(stem)
            got = sum(float(row.get(q) or 0) for q in full_marks(notebook)) if row else 0.0
            lost = shortfalls(notebook, row, Path(tmp) / "grades" / "results", stem)
            bad += bool(lost)
            print(f"{'ok ' if not lost else 'BAD'} {a.origin:9} {a.label:40} {got:g} of {full:g}"
                  + (f"  [{row['grading_status'][:60]}]" if row else ""))
            for line in lost:
                print(f"      {line}")
    print(f"{len(chosen) - bad}/{len(chosen)} with full marks, graded in {took:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
