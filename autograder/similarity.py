"""Similarity flags: pairs of submissions whose answers are suspiciously alike, beyond the course's code.

    course similarity DIR [--threshold T]      (DIR: a folder ``course grade`` wrote)

``course grade`` runs this after grading (``--no-similarity`` skips it). It compares the **answer
cells only** of every pair of submissions of one assignment, question by question, and each
submission with the master's answers (last year's published solution), and writes:

- ``DIR/similarity.csv``: the flagged pairs, most alike first (``score``, ``kind`` = ``pair`` or
  ``master``, the questions involved with their scores, both rows' files and LMS ids, the shared
  fingerprints);
- a section of ``DIR/report.html`` that shows the top flags side by side, the matching lines
  highlighted (static HTML: no script, every character from a notebook escaped).

A flag is for a person to look at, never a grade change: nothing here touches a grade or the
students' feedback.

*Which cells.* :func:`answer_code` runs in :mod:`autograder.notebook_info`'s process (under its
memory cap) while the grader reads the notebooks: every code cell of the submission that is not the
course's own (a cell equal to one of the blank student notebook's code cells: its setup, given
cells, the earlier notebooks' GIVEN answers, the answer templates and the check cells), labelled
with the question whose prompt (``**Question N``) it follows, up to that question's check cell.
``results/<stem>.json`` keeps them (``answer_code``), so ``course similarity DIR`` needs nothing
but the graded folder.

*How.* Each answer cell is normalised (:func:`normalise`: parsed, comments, docstrings and blank
lines dropped; every name the student chose (variables, arguments, helpers, ``self`` attributes the
page does not prescribe) becomes ``v``, strings ``s``; ``a @ b``, ``a.matmul(b)``, ``torch.bmm``
become ``torch.matmul(a, b)``; ``x.softmax(-1)``, ``F.softmax(x, dim=-1)`` become
``torch.softmax(x, -1)``; ``x += y`` becomes ``x = x + y``; ``.T``/``.mT``/``swapaxes`` a
transpose; one statement per line, without indentation; a class's methods, a cell made of
definitions and a question's cells in a fixed order), and fingerprinted by ``copydetect``
(winnowing, as MOSS: k-grams of the normalised text, a window's smallest hash kept). The course's
code, normalised the same way, is boilerplate: every k-gram of it counts for nothing. So does every
fingerprint held by at least half the class (``COMMON``: the obvious way to write a short line), and,
between two students, every fingerprint of the master's answers (both copying the solution shows as
each one's similarity to the master, a flag of its own kind). Fingerprint sets are compared.
It runs in a process of its own (:func:`after_grading`): a fixed hash seed (copydetect hashes with
``hash()``, so the same submissions give the same bytes), a memory cap and a time limit.

*Scores.* A pair's score is the share of the two notebooks' fingerprints they have in common (Dice:
twice the shared fingerprints over both notebooks' fingerprints, all questions together; every pair
at once, as a product of 0/1 matrices), and the same per question; against the master, the share of
the student's fingerprints that are the master's. A pair is flagged when its score is at least the
threshold (``THRESHOLD``), or when one large question alone (``QUESTION_SHARED`` fingerprints in
common, about thirty lines) scores ``QUESTION_SCORE`` (a copied question among honest ones). The
report's side-by-side view highlights the lines under the shared fingerprints
(``copydetect.compare_files``).
"""
from __future__ import annotations

import argparse
import ast
import bisect
import html
import io
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

THRESHOLD = 0.6            # default flag threshold (whole notebook, or one large question)
COMMON = 0.5               # a fingerprint in at least this share of the class's answers counts for nothing
COMMON_MIN = 4             # ... and in at least this many answers (small classes)
QUESTION_SHARED = 150      # fingerprints one question alone must share to flag a pair (~30 lines) ...
QUESTION_SCORE = 0.8       # ... at this score or more
PAIR_SHARED = 5            # fingerprints any flagged pair shares at least
IDENTICAL_MIN = 30         # fingerprints (the course's code left out) an identical answer has at least
IDENTICAL_MASTER = 0.95    # Jaccard of a notebook's fingerprints and the master's: "the master's answers"
K = 20                     # k-gram length, in characters of normalised code
WINDOW = 4                 # winnowing window (a match of K + WINDOW - 1 characters is always found)
SHOWN = 20                 # flags shown side by side in report.html
SIDE_CHARS = 12_000        # characters of one side of one question shown there
MAX_CELLS = 200            # answer cells kept per notebook
MAX_CELL_CHARS = 20_000    # characters kept per cell
MAX_CHARS = 200_000        # characters kept per notebook
WORKER_SECONDS = 600       # the comparing process's limit
WORKER_MEMORY = 4 * 2**30

SETUP_MARK = "# GIVEN: setup."
QUESTION_NUMBER = re.compile(r"\*\*(?:Question\s+(\d+)\b|q(\d+)\b)")
CHECK_CALL = re.compile(r"""^\s*(?:\w+\.)?check\(\s*["'][\w\-]+["']\s*\)\s*;?\s*$""")
END_QUESTION = "<!-- END QUESTION -->"
SOLUTION_MARK = re.compile(r"^\s*#\s*(BEGIN|END)\s+(PROMPT|SOLUTION)?", re.IGNORECASE)
SOLUTION_TAIL = re.compile(r"\s*#\s*SOLUTION\s*$", re.IGNORECASE)
BEGIN_MARK = "<!-- similarity: written by course similarity -->"
END_MARK = "<!-- /similarity -->"
PLACEHOLDER = (f"{BEGIN_MARK}<h2>Similar submissions</h2><p>Not compared (see "
               f"<code>course similarity DIR</code>).</p>{END_MARK}")


# ---------------------------------------------------------------- which cells are answers

def _text(v: Any) -> str:
    if isinstance(v, list):
        return "".join(x for x in v if isinstance(x, str))
    return v if isinstance(v, str) else ""


def answer_code(nb: Any, course_code: list[str]) -> list[dict]:
    """The answer cells of a parsed notebook: ``[{"cell": N, "question": "q3" or "", "source"}]``.
    A cell is an answer unless it is the course's own (equal to one of ``course_code``, the blank
    student notebook's code cells), the setup cell, a check cell or empty. Its question is the last
    ``**Question N`` prompt before it, until that question's check cell or end marker."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return []
    course = {c.strip() for c in course_code}
    out: list[dict] = []
    current, total = "", 0
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        src = _text(cell.get("source"))
        if cell.get("cell_type") == "markdown":
            end = src.rfind(END_QUESTION)
            found = list(QUESTION_NUMBER.finditer(src))
            if found and found[-1].start() > end:
                m = found[-1]
                current = f"q{m.group(1) or m.group(2)}"
            elif end >= 0:
                current = ""
            continue
        if cell.get("cell_type") != "code":
            continue
        stripped = src.strip()
        lines = [x for x in stripped.splitlines() if x.strip()]
        if lines and all(CHECK_CALL.match(x) for x in lines):
            current = ""
            continue
        if not stripped or stripped in course or stripped.startswith(SETUP_MARK):
            continue
        if len(out) >= MAX_CELLS or total >= MAX_CHARS:
            break
        src = src[:min(MAX_CELL_CHARS, MAX_CHARS - total)]
        total += len(src)
        out.append({"cell": i + 1, "question": current, "source": src})
    return out


def master_answers(name: str, repo: Path | None = None) -> list[dict] | None:
    """The master's answer lines (solutions/NN_name.ipynb), as :func:`answer_code` gives a
    submission's; None when the master is not here."""
    repo = repo or Path(__file__).resolve().parent.parent
    path = repo / "solutions" / f"{name}.ipynb"
    if not path.is_file():
        return None
    nb = json.loads(path.read_text(encoding="utf-8"))
    out, question, tests = [], "", False
    for i, cell in enumerate(nb.get("cells", [])):
        text = _text(cell.get("source"))
        if cell.get("cell_type") == "raw":
            head = text.strip().upper()
            if head.startswith("# BEGIN QUESTION"):
                m = re.search(r"^\s*name:\s*(\S+)", text, re.MULTILINE)
                question = m.group(1) if m else ""
            elif head.startswith("# END QUESTION"):
                question = ""
            elif head.startswith("# BEGIN TESTS"):
                tests = True
            elif head.startswith("# END TESTS"):
                tests = False
        elif cell.get("cell_type") == "code" and question and not tests:
            answer = _solution_lines(text)
            if answer.strip():
                out.append({"cell": i + 1, "question": question, "source": answer})
    return out


def _solution_lines(source: str) -> str:
    """A master code cell's answer lines, as otter assign removes them (course.build.split_solution,
    without importing the build): its solution blocks and ``# SOLUTION`` lines."""
    answer, block = [], None
    for line in source.splitlines():
        mark = SOLUTION_MARK.match(line)
        if mark:
            block = (mark.group(2) or "").lower() if mark.group(1).upper() == "BEGIN" else None
            block = "solution" if block and block.startswith("solution") else block
        elif block == "solution" or (block is None and SOLUTION_TAIL.search(line)):
            answer.append(SOLUTION_TAIL.sub("", line))
    return "\n".join(answer)


# ---------------------------------------------------------------- normalising code

MODULE_ALIASES = {"torch": "torch", "F": "torch", "functional": "torch"}
# methods and functions that are the same call written as x.f(...), torch.f(x, ...) or F.f(x, ...)
TENSOR_FUNCS = {
    "softmax", "log_softmax", "matmul", "bmm", "mm", "transpose", "swapaxes", "swapdims", "masked_fill",
    "exp", "log", "sum", "mean", "max", "min", "amax", "amin", "sqrt", "rsqrt", "tril", "triu", "reshape",
    "view", "multinomial", "argmax", "where", "var", "std", "flip", "relu", "gelu", "unsqueeze",
    "squeeze", "permute", "size", "pow", "abs", "topk", "sort", "cumsum", "clamp", "norm", "dropout",
}
RENAMED = {"bmm": "matmul", "mm": "matmul", "swapaxes": "transpose", "swapdims": "transpose",
           "amax": "max", "amin": "min", "view": "reshape", "view_as": "reshape_as"}
TENSOR_FUNCS |= {"view_as", "reshape_as", "add", "sub", "mul", "div", "neg", "tanh", "sigmoid"}
NO_OPS = {"contiguous"}    # x.contiguous().view(...) is x.reshape(...) for what it computes
MODULE_PATHS = {"torch", "torch.nn.functional", "nn.functional", "F", "np", "math", "nn", "numpy"}
DIM_KEYWORDS = {"dim", "axis", "dim0", "dim1", "diagonal", "num_samples", "keepdim"}


@dataclass
class CourseNames:
    """What the page prescribes: the names its code defines at the top level, every name it
    uses, and the attributes it sets or reads on ``self``."""

    top: set[str] = field(default_factory=set)
    used: set[str] = field(default_factory=set)
    self_attrs: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, sources: list[str]) -> CourseNames:
        names = cls()
        for src in sources:
            tree = _parse(src)
            if tree is None:
                continue
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.top.add(node.name)
                elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names.top |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Name):
                    names.used.add(node.id)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.used.add(node.name)
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id == "self":
                    names.self_attrs.add(node.attr)
        return names


def _parse(src: str) -> ast.Module | None:
    """``src`` parsed, its IPython magics and shell lines read as ``pass``; None if it does not parse."""
    lines = src.splitlines()
    for i, line in enumerate(lines):
        s = line.lstrip()
        if s.startswith(("%", "!")):
            lines[i] = line[:len(line) - len(s)] + "pass"
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _module_bound(tree: ast.Module) -> set[str]:
    """The names a cell binds at its top level (not inside a function, class or comprehension)."""
    found: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _torch(attr: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(id="torch", ctx=ast.Load()), attr=attr, ctx=ast.Load())


class _Normaliser(ast.NodeTransformer):
    """The rewrites of :func:`normalise`, on one cell's tree."""

    def __init__(self, tree: ast.Module, names: CourseNames) -> None:
        self.names = names
        self.modules = dict(MODULE_ALIASES)
        bound: set[str] = set()
        module_level = _module_bound(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.add(node.id)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    local = a.asname or a.name.split(".")[0]
                    full = f"{getattr(node, 'module', None) or ''}.{a.name}".strip(".")
                    if full.startswith("torch") and (full.endswith("functional") or full == "torch"):
                        self.modules[local] = "torch"
                    elif a.asname:
                        bound.add(local)
        keep = (names.top & module_level) | set(self.modules) | {"self", "cls"}
        self.renamed = bound - keep

    # names
    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.renamed:
            return ast.copy_location(ast.Name(id="v", ctx=node.ctx), node)
        if node.id in self.modules:
            return ast.copy_location(ast.Name(id=self.modules[node.id], ctx=node.ctx), node)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.annotation = None
        if node.arg in self.renamed:
            node.arg = "v"
        return node

    def _def(self, node: Any) -> ast.AST:
        self.generic_visit(node)
        if node.name in self.renamed and node.name not in self.names.used:
            node.name = "v"
        node.body = [s for s in node.body if not _is_docstring(s)] or [ast.Pass()]
        if not isinstance(node, ast.ClassDef):
            node.returns = None
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _def

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if node.attr in ("T", "mT") and isinstance(node.ctx, ast.Load):
            value = self.visit(node.value)
            return ast.copy_location(ast.Call(func=_torch("transpose"), args=[
                value, ast.Constant(-2), ast.Constant(-1)], keywords=[]), node)
        self.generic_visit(node)
        v = node.value
        if isinstance(v, ast.Name) and v.id == "self" and node.attr not in self.names.self_attrs:
            node.attr = "v"
        if _dotted(v) in ("torch.nn.functional", "nn.functional"):
            node.value = ast.Name(id="torch", ctx=ast.Load())       # torch.nn.functional.f -> torch.f
        return node

    # calls and operators
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in NO_OPS and not node.args and not node.keywords \
                and _dotted(f.value) not in MODULE_PATHS:
            return f.value                                   # x.contiguous() -> x
        inplace = isinstance(f, ast.Attribute) and f.attr.endswith("_") and f.attr[:-1] in TENSOR_FUNCS
        if inplace:
            f.attr = f.attr[:-1]                             # x.masked_fill_(m, 0) -> x.masked_fill(m, 0)
        if isinstance(f, ast.Attribute) and f.attr in TENSOR_FUNCS:
            attr = RENAMED.get(f.attr, f.attr)
            if _dotted(f.value) == "torch":
                node.func = _torch(attr)
                given = [k for k in node.keywords if k.arg == "input"]
                if given and not node.args:                  # torch.softmax(input=x, ...)
                    node.args = [given[0].value]
                    node.keywords = [k for k in node.keywords if k.arg != "input"]
            elif not (isinstance(f.value, ast.Name) and f.value.id == "self") \
                    and _dotted(f.value) not in MODULE_PATHS:
                node.func = _torch(attr)                     # x.softmax(-1) -> torch.softmax(x, -1)
                node.args = [f.value, *node.args]
        if isinstance(node.func, ast.Attribute) and node.func.attr == "transpose" and len(node.args) == 3:
            dims = [_literal(a) for a in node.args[1:]]
            if dims in ([-2, -1], [-1, -2]):
                node.args[1:] = [ast.Constant(-2), ast.Constant(-1)]
        moved = [k.value for k in node.keywords if k.arg in DIM_KEYWORDS]
        node.keywords = [k for k in node.keywords if k.arg not in DIM_KEYWORDS]
        node.args = [*node.args, *moved]
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult):
            return ast.copy_location(ast.Call(func=_torch("matmul"), args=[node.left, node.right],
                                              keywords=[]), node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        load = _as_load(node.target)
        value = self.visit_BinOp(ast.BinOp(left=load, op=node.op, right=node.value))
        return ast.copy_location(ast.Assign(targets=[node.target], value=value), node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        self.generic_visit(node)
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        v = node.value                                          # x.shape[i] -> torch.size(x, i)
        if isinstance(v, ast.Attribute) and v.attr == "shape" and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Call(func=_torch("size"), args=[v.value, node.slice], keywords=[]),
                                     node)
        if isinstance(v, ast.Call) and _dotted(v.func) == "torch.size" and len(v.args) == 1 \
                and not v.keywords and isinstance(node.ctx, ast.Load):       # x.size()[i] -> torch.size(x, i)
            return ast.copy_location(ast.Call(func=_torch("size"), args=[v.args[0], node.slice], keywords=[]),
                                     node)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        """``x.masked_fill_(m, 0)`` as a statement is ``x = x.masked_fill(m, 0)``."""
        call = node.value
        f = call.func if isinstance(call, ast.Call) else None
        inplace = isinstance(f, ast.Attribute) and f.attr.endswith("_") and f.attr[:-1] in TENSOR_FUNCS \
            and _dotted(f.value) not in MODULE_PATHS and _dotted(f.value) != "self"
        self.generic_visit(node)
        value = node.value
        if inplace and isinstance(value, ast.Call) and value.args \
                and _dotted(value.func).startswith("torch."):
            target = _as_store(value.args[0])
            if target is not None:
                return ast.copy_location(ast.Assign(targets=[target], value=value), node)
        return node

    # constants
    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, (str, bytes)):
            return ast.copy_location(ast.Constant("s"), node)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return ast.copy_location(ast.Constant("s"), node)


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None


def _dotted(node: ast.AST) -> str:
    """``torch.nn.functional`` for that attribute chain of names; '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *parts[::-1]]) if isinstance(node, ast.Name) else ""


def _as_store(node: ast.AST) -> ast.AST | None:
    """A name or attribute chain as an assignment's target (None for anything else)."""
    if not _dotted(node):
        return None
    import copy
    node = copy.deepcopy(node)
    node.ctx = ast.Store()
    return node


def _as_load(node: ast.AST) -> ast.AST:
    import copy
    node = copy.deepcopy(node)
    for n in ast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return node


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _emit(stmts: list[ast.stmt], out: list[tuple[str, int, int]]) -> None:
    """One normalised line per statement (compound statements: their header), with the original
    lines it came from."""
    for s in stmts:
        if _is_docstring(s) or isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass)):
            continue
        first = min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])])
        body = getattr(s, "body", None)
        head_end = (max(first, body[0].lineno - 1) if isinstance(body, list) and body
                    else s.end_lineno or first)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decos = "".join("@" + ast.unparse(d) for d in s.decorator_list)
            out.append((_compact(f"{decos}def {s.name}({ast.unparse(s.args)}):"), first, head_end))
        elif isinstance(s, ast.ClassDef):
            bases = ",".join(ast.unparse(b) for b in [*s.bases, *s.keywords])
            out.append((_compact(f"class {s.name}({bases}):"), first, head_end))
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            out.append((_compact(f"for {ast.unparse(s.target)} in {ast.unparse(s.iter)}:"), first, head_end))
        elif isinstance(s, ast.While):
            out.append((_compact(f"while {ast.unparse(s.test)}:"), first, head_end))
        elif isinstance(s, ast.If):
            out.append((_compact(f"if {ast.unparse(s.test)}:"), first, head_end))
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            out.append((_compact("with " + ",".join(ast.unparse(i) for i in s.items) + ":"), first, head_end))
        elif isinstance(s, ast.Try):
            out.append(("try:", first, head_end))
        elif body is None:
            out.append((_compact(ast.unparse(s)), first, s.end_lineno or first))
            continue
        else:                                              # match, try*: as one piece
            out.append((_compact(ast.unparse(s)), first, s.end_lineno or first))
            continue
        _emit(body, out)
        for h in getattr(s, "handlers", []):
            out.append((_compact(f"except {ast.unparse(h.type) if h.type else ''}:"), h.lineno, h.lineno))
            _emit(h.body, out)
        orelse = getattr(s, "orelse", [])
        if orelse:
            out.append(("else:", orelse[0].lineno, orelse[0].lineno))
            _emit(orelse, out)
        final = getattr(s, "finalbody", [])
        if final:
            out.append(("finally:", final[0].lineno, final[0].lineno))
            _emit(final, out)


COMMENT = re.compile(r"#.*$")


def _sort_definitions(tree: ast.Module) -> None:
    """Methods in a fixed order (by name, then text) after a class's other statements, and a cell
    made only of definitions in that order too: reordering them changes no fingerprint."""
    def key(node: ast.stmt) -> tuple[str, str]:
        return (getattr(node, "name", ""), ast.unparse(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            defs = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            rest = [s for s in node.body if s not in defs]
            node.body = rest + sorted(defs, key=key)
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if tree.body and all(isinstance(s, definitions) for s in tree.body):
        tree.body = sorted(tree.body, key=key)


def normalise(source: str, names: CourseNames | None = None) -> list[tuple[str, int, int]]:
    """``source`` as normalised lines: ``(text, first original line, last original line)`` (see the
    module's docstring). Code that does not parse keeps its lines, comments and spaces dropped."""
    names = names or CourseNames()
    tree = _parse(source)
    if tree is not None:
        try:
            tree = _Normaliser(tree, names).visit(tree)
            _sort_definitions(tree)
            out: list[tuple[str, int, int]] = []
            _emit(tree.body, out)
            return [x for x in out if x[0]]
        except (RecursionError, ValueError, TypeError, AttributeError, MemoryError):
            pass
    out = []
    for i, line in enumerate(source.splitlines(), 1):
        text = _compact(COMMENT.sub("", line))
        if text:
            out.append((text, i, i))
    return out


# ---------------------------------------------------------------- fingerprints

@dataclass
class Unit:
    """One submission's answers to one question: the normalised text, where each of its lines came
    from, and its fingerprints."""

    question: str
    cells: list[dict]
    text: str
    origins: list[tuple[int, int, int]]          # per normalised line: (cell, first line, last line)
    starts: list[int]                            # where each normalised line starts in text
    fp: Any = None

    def lines_at(self, slices: Any) -> set[tuple[int, int]]:
        """The original (cell, line) pairs under copydetect's slices of ``text``."""
        hit: set[tuple[int, int]] = set()
        for a, b in zip(slices[0], slices[1], strict=True):
            lo = bisect.bisect_right(self.starts, int(a)) - 1
            hi = bisect.bisect_right(self.starts, max(int(b) - 1, int(a))) - 1
            for n in range(max(lo, 0), max(hi, 0) + 1):
                cell, first, last = self.origins[n]
                hit |= {(cell, x) for x in range(first, last + 1)}
        return hit


def fingerprint(text: str, boilerplate: Any = None, window: int = WINDOW, pygments: bool = False) -> Any:
    """copydetect's fingerprint of normalised text (already tokenised: no filter of its own; with
    ``pygments``, raw code through copydetect's own tokens, for comparison)."""
    from copydetect import CodeFingerprint
    return CodeFingerprint("answer.py", K, window, boilerplate=boilerplate, filter=pygments,
                           fp=io.StringIO(text))


def _raw_lines(source: str) -> list[tuple[str, int, int]]:
    return [(line, i, i) for i, line in enumerate(source.splitlines(), 1) if line.strip()]


def _without(fp: Any, drop: set) -> Any:
    """The same fingerprint with the hashes in ``drop`` removed."""
    import copy
    if not drop & fp.hashes:
        return fp
    new = copy.copy(fp)
    new.hashes = fp.hashes - drop
    new.hash_idx = {h: i for h, i in fp.hash_idx.items() if h not in drop}
    return new


@dataclass
class Submission:
    file: str
    id: str
    units: dict[str, Unit]
    versus_master: dict[str, Any] = field(default_factory=dict)   # fingerprints vs the master
    versus_class: dict[str, Any] = field(default_factory=dict)    # ... and vs classmates


@dataclass
class Flag:
    kind: str                     # "pair" or "master"
    a: Submission
    b: Submission
    score: float
    whole: float
    questions: list[tuple[str, float, int]]       # (question, score, shared fingerprints), best first
    shared: int
    identical: bool = False       # the same answers (byte for byte; against the master, its fingerprints)


def _by_question(cells: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for c in cells:
        out.setdefault(str(c.get("question", "")), []).append(c)
    return out


class _Fingerprinter:
    """Normalised units and their fingerprints, each distinct text done once (a class shares cells)."""

    def __init__(self, names: CourseNames, boilerplate: Any, pygments: bool = False) -> None:
        self.names = names
        self.boilerplate = boilerplate
        self.pygments = pygments          # copydetect's own tokens instead (benchmarks/similarity.py)
        self.lines: dict[str, list[tuple[str, int, int]]] = {}
        self.fps: dict[str, Any] = {}

    def unit(self, question: str, cells: list[dict]) -> Unit:
        """One question's cells, in the order of their normalised text (moving cells changes nothing)."""
        lines, origins = [], []
        for c in cells:
            if c["source"] not in self.lines:
                src = c["source"]
                self.lines[src] = _raw_lines(src) if self.pygments else normalise(src, self.names)
        for c in sorted(cells, key=lambda c: "\n".join(t for t, _a, _b in self.lines[c["source"]])):
            for text, first, last in self.lines[c["source"]]:
                lines.append(text)
                origins.append((c["cell"], first, last))
        starts, pos = [], 0
        for line in lines:
            starts.append(pos)
            pos += len(line) + 1
        u = Unit(question, cells, "\n".join(lines), origins, starts)
        if u.text not in self.fps:
            self.fps[u.text] = fingerprint(u.text, self.boilerplate, pygments=self.pygments)
        u.fp = self.fps[u.text]
        return u

    def submission(self, file: str, id_: str, cells: list[dict]) -> Submission:
        return Submission(file, id_, {q: self.unit(q, c) for q, c in _by_question(cells).items()})


def _shared_matrices(subs: list[Submission]) -> dict[str, Any]:
    """For each question, how many fingerprints each pair of submissions shares: ``X @ X.T`` of the
    0/1 matrix of who holds which fingerprint (all pairs at once)."""
    import numpy as np
    out: dict[str, Any] = {}
    for q in sorted({q for s in subs for q in s.versus_class}):
        holders, hashes = [], []
        for i, s in enumerate(subs):
            fp = s.versus_class.get(q)
            if fp is not None and fp.hashes:
                holders += [i] * len(fp.hashes)
                hashes += list(fp.hashes)
        if not hashes:
            continue
        columns, col = np.unique(np.array(hashes, dtype=np.int64), return_inverse=True)
        x = np.zeros((len(subs), len(columns)), dtype=np.float32)
        x[np.array(holders), col] = 1.0
        out[q] = x @ x.T
    return out


def _score(kind: str, a: Submission, b: Submission, sizes_a: dict[str, int], sizes_b: dict[str, int],
           shared: dict[str, int], threshold: float) -> Flag | None:
    """A pair's flag, or None. Its score: the share of both notebooks' fingerprints they have in
    common (Dice, all questions together); against the master, the share of the student's
    fingerprints that are the master's (the master answers every question). One large question
    alike enough (QUESTION_SCORE over QUESTION_SHARED fingerprints) flags on its own."""
    n = sum(shared.values())
    ta, tb = sum(sizes_a.values()), sum(sizes_b.values())
    if kind == "master":
        whole = n / ta if ta else 0.0
    else:
        whole = 2 * n / (ta + tb) if ta + tb else 0.0
    per = sorted(((q, 2 * m / (sizes_a.get(q, 0) + sizes_b.get(q, 0)), m) for q, m in shared.items() if m),
                 key=lambda x: (-x[1], x[0]))
    best = max([x for _q, x, m in per if m >= QUESTION_SHARED] + [0.0])
    score = max(whole, best if best >= QUESTION_SCORE else 0.0)
    if score < threshold or n < PAIR_SHARED:
        return None
    return Flag(kind, a, b, round(score, 4), round(whole, 4), [(q, round(x, 4), m) for q, x, m in per], n)


def _candidates(subs: list[Submission], sizes: list[dict[str, int]], shared: dict[str, Any],
                threshold: float) -> list[tuple[int, int]]:
    """The pairs whose scores (as :func:`_score` computes them, here for all pairs at once) reach
    the threshold."""
    import numpy as np
    n = len(subs)
    if n < 2 or not shared:
        return []
    total = np.zeros((n, n), dtype=np.float64)
    best = np.zeros((n, n), dtype=np.float64)
    own_total = np.array([sum(x.values()) for x in sizes], dtype=np.float64)
    for q, m in shared.items():
        m = m.astype(np.float64)
        total += m
        own = np.array([x.get(q, 0) for x in sizes], dtype=np.float64)
        den = own[:, None] + own[None, :]
        score = np.divide(2 * m, den, out=np.zeros_like(m), where=den > 0)
        best = np.maximum(best, np.where((m >= QUESTION_SHARED) & (score >= QUESTION_SCORE), score, 0.0))
    den = own_total[:, None] + own_total[None, :]
    whole = np.divide(2 * total, den, out=np.zeros_like(total), where=den > 0)
    hit = (np.maximum(whole, best) >= threshold - 1e-9) & (total >= max(PAIR_SHARED, 1))
    i, j = np.nonzero(np.triu(hit, k=1))
    return list(zip(i.tolist(), j.tolist(), strict=True))


def compare(submissions: list[dict], course_code: list[str], master: list[dict] | None = None,
            threshold: float = THRESHOLD, common: float = COMMON, pygments: bool = False) -> list[Flag]:
    """Every flag of a class: ``submissions`` are ``{"file", "id", "answer_code"}``; ``course_code``
    the course's code cells (boilerplate); ``master`` the master's answers (or None). ``pygments``:
    copydetect's own tokens instead of :func:`normalise` (to measure what normalising adds)."""
    import numpy as np
    names = CourseNames.of(course_code)
    lines = _raw_lines if pygments else (lambda c: normalise(c, names))
    course_text = "\n".join(text for c in course_code for text, _a, _b in lines(c))
    boiler = np.array(sorted(fingerprint(course_text, window=1, pygments=pygments).hashes)) \
        if len(course_text) >= K else None
    maker = _Fingerprinter(names, boiler, pygments)
    subs = [maker.submission(str(s.get("file", "")), str(s.get("id", "")), s.get("answer_code") or [])
            for s in submissions]
    master_sub = maker.submission("(the master's answers)", "", master) if master else None
    # fingerprints most of the class holds count for nothing
    counts: dict[tuple[str, int], int] = {}
    answered: dict[str, int] = {}
    for s in subs:
        for q, u in s.units.items():
            answered[q] = answered.get(q, 0) + 1
            for h in u.fp.hashes:
                counts[(q, h)] = counts.get((q, h), 0) + 1
    commons: dict[str, set] = {}
    for (q, h), n in counts.items():
        if n >= max(COMMON_MIN, common * answered[q]):
            commons.setdefault(q, set()).add(h)
    master_hashes = {q: u.fp.hashes for q, u in master_sub.units.items()} if master_sub else {}
    done: dict[tuple[int, str], tuple[Any, Any]] = {}
    for s in [*subs, *([master_sub] if master_sub else [])]:
        for q, u in s.units.items():
            key = (id(u.fp), q)
            if key not in done:
                vm = _without(u.fp, commons.get(q, set()))
                done[key] = (vm, _without(vm, master_hashes.get(q, set())))
            s.versus_master[q], s.versus_class[q] = done[key]
    flags: list[Flag] = []
    sizes = [{q: len(fp.hashes) for q, fp in s.versus_class.items()} for s in subs]
    if master_sub is not None:
        mine = {q: fp.hashes for q, fp in master_sub.versus_master.items()}
        msizes = {q: len(h) for q, h in mine.items()}
        for s in subs:
            own = {q: len(fp.hashes) for q, fp in s.versus_master.items()}
            shared = {q: len(fp.hashes & mine[q]) for q, fp in s.versus_master.items() if q in mine}
            f = _score("master", s, master_sub, own, msizes, shared, threshold)
            if f:
                flags.append(f)
    for i, j in _candidates(subs, sizes, _shared_matrices(subs), threshold):
        shared = {q: len(subs[i].versus_class[q].hashes & subs[j].versus_class[q].hashes)
                  for q in set(subs[i].versus_class) & set(subs[j].versus_class)}
        f = _score("pair", subs[i], subs[j], sizes[i], sizes[j], shared, threshold)
        if f:
            flags.append(f)
    flags = _identical(subs, master_sub, flags)
    flags.sort(key=lambda f: (-f.score, f.kind, f.a.file, f.b.file))
    return flags


def _canonical(sub: Submission) -> str:
    """A submission's answer cells, each as written (line ends and trailing spaces aside), in a
    fixed order: two submissions with the same text gave byte-identical answers."""
    cells = [c for u in sub.units.values() for c in u.cells]
    return "\x00".join(sorted("\n".join(line.rstrip() for line in str(c["source"]).strip().splitlines())
                              for c in cells))


def _raw(sub: Submission) -> set[tuple[str, int]]:
    """A submission's fingerprints by question, the course's code left out but nothing else."""
    return {(q, h) for q, u in sub.units.items() for h in u.fp.hashes}


def _identical(subs: list[Submission], master: Submission | None, flags: list[Flag]) -> list[Flag]:
    """Byte-identical answers are always flagged, pair by pair, however many wrote them (the
    fingerprints of half the class count for nothing in the scores: seven identical notebooks of
    thirteen scored nothing); a notebook whose fingerprints are the master's (Jaccard at least
    IDENTICAL_MASTER, over the questions it answers) is flagged beside the master. Answers of
    fewer than IDENTICAL_MIN
    fingerprints (a line or two) are left to the scores."""
    def whole(a: Submission, b: Submission, size: int) -> Flag:
        qs = sorted({q for q in a.units} | {q for q in b.units})
        return Flag("master" if b is master else "pair", a, b, 1.0, 1.0,
                    [(q, 1.0, len(a.units[q].fp.hashes) if q in a.units else 0) for q in qs], size, True)

    seen = {(f.kind, f.a.file, f.b.file) for f in flags}
    groups: dict[str, list[Submission]] = {}
    for s in subs:
        if len(_raw(s)) >= IDENTICAL_MIN:
            groups.setdefault(_canonical(s), []).append(s)
    out = list(flags)
    for group in groups.values():
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if ("pair", a.file, b.file) in seen:
                    out = [f for f in out if (f.kind, f.a.file, f.b.file) != ("pair", a.file, b.file)]
                out.append(whole(a, b, len(_raw(a))))
    if master is not None:
        for s in subs:
            theirs = _raw(s)
            mine = {(q, h) for q, h in _raw(master) if q in s.units}    # of the questions it answers
            if len(theirs) >= IDENTICAL_MIN and len(theirs & mine) >= IDENTICAL_MASTER * len(theirs | mine):
                out = [f for f in out if (f.kind, f.a.file) != ("master", s.file)]
                out.append(whole(s, master, len(theirs)))
    return out


# ---------------------------------------------------------------- output

def csv_text(flags: list[Flag]) -> str:
    from .csvcells import csv_text as write
    from .csvcells import text_cell
    rows = [["score", "kind", "questions", "file_a", "id_a", "file_b", "id_b", "whole_notebook",
             "shared_fingerprints"]]
    for f in flags:
        qs = "; ".join(f"{q or 'outside questions'} {s:.2f}" for q, s, _m in f.questions if s > 0)
        rows.append([f"{f.score:.4f}", f.kind, text_cell(qs), text_cell(f.a.file), f.a.id,
                     text_cell(f.b.file), f.b.id, f"{f.whole:.4f}", str(f.shared)])
    return write(rows)


def write_csv(out: Path, flags: list[Flag]) -> Path:
    path = out / "similarity.csv"
    path.write_text(csv_text(flags), encoding="utf-8", errors="replace")
    return path


def _side(unit: Unit | None, hits: set[tuple[int, int]]) -> str:
    esc = html.escape
    if unit is None:
        return "<p class='sim-none'>(no answer)</p>"
    parts, left = [], SIDE_CHARS
    for c in unit.cells:
        rows = []
        for n, line in enumerate(str(c["source"]).splitlines(), 1):
            if left <= 0:
                rows.append("<span class='sim-cell'>(cut: see the notebook)</span>")
                break
            line = line[:left]
            left -= len(line) + 1
            cls = " class='hit'" if (c["cell"], n) in hits else ""
            rows.append(f"<span{cls}>{esc(line) or ' '}</span>")
        parts.append(f"<div class='sim-cell'>cell {int(c['cell'])}</div><pre>{chr(10).join(rows)}</pre>")
        if left <= 0:
            break
    return "".join(parts)


def html_section(flags: list[Flag], threshold: float, seconds: float, n: int, master: bool,
                 shown: int = SHOWN) -> str:
    """The report's section: the flags' table and the top ones side by side (static, escaped)."""
    from copydetect import compare_files
    esc = html.escape
    out = [BEGIN_MARK, "<style>.sim td,.sim th{vertical-align:top}.sim pre{margin:0;font-size:.8em;"
           "white-space:pre-wrap;word-break:break-word;background:#f7f7f7;max-height:30em;overflow:auto}"
           ".sim .hit{background:#ffd27a;display:block}.sim-cell{font-size:.75em;color:#777}"
           ".sim-grid{display:grid;grid-template-columns:1fr 1fr;gap:.6em}</style>",
           f"<h2>Similar submissions ({len(flags)})</h2>",
           "<p>Pairs whose answer cells are alike beyond the course's own code (the given cells, the "
           "templates, the earlier notebooks' answers) and beyond what most of the class wrote; "
           "<i>master</i>: a submission alike to the master's answers. Names, comments, blank lines, "
           "the order of functions and <code>a @ b</code> against <code>torch.matmul(a, b)</code> do "
           "not hide a copy. <b>A flag is for a person to look at, never a grade change.</b> "
           f"Threshold {threshold:g}; {n} submissions compared in {seconds:.1f} s"
           f"{'' if master else ' (no master notebook here: not compared with it)'}. "
           "All flags: <code>similarity.csv</code>.</p>"]
    if not flags:
        out.append("<p>None.</p>" + END_MARK)
        return "\n".join(out)
    out.append("<table class='sim'><tr><th>score</th><th>kind</th><th>file</th><th>file</th>"
               "<th>questions</th></tr>")
    for f in flags:
        qs = ", ".join(f"{esc(q or 'outside questions')} {s:.2f}" for q, s, _m in f.questions[:6] if s > 0)
        out.append(f"<tr><td>{f.score:.2f}</td><td>{esc(f.kind)}</td><td>{esc(f.a.file)}</td>"
                   f"<td>{esc(f.b.file)}</td><td>{qs}</td></tr>")
    out.append("</table>")
    for f in flags[:shown]:
        same = ", identical answers" if f.identical else ""
        out.append(f"<h3>{f.score:.2f} ({esc(f.kind)}{same}): {esc(f.a.file)} &amp; {esc(f.b.file)}</h3>")
        fa = f.a.versus_master if f.kind == "master" else f.a.versus_class
        fb = f.b.versus_master if f.kind == "master" else f.b.versus_class
        if f.identical:                      # the same answers: every line of them
            fa, fb = ({q: u.fp for q, u in s.units.items()} for s in (f.a, f.b))
        for q, s, _m in f.questions:
            if s <= 0:
                continue
            ua, ub = f.a.units.get(q), f.b.units.get(q)
            if q not in fa or q not in fb:
                continue
            _o, _s, (sl1, sl2) = compare_files(fa[q], fb[q])
            hits_a = ua.lines_at(sl1) if ua is not None and len(sl1) else set()
            hits_b = ub.lines_at(sl2) if ub is not None and len(sl2) else set()
            out.append(f"<p><b>{esc(q or 'outside questions')}</b>: {s:.2f}</p><div class='sim-grid'>"
                       f"<div>{_side(ua, hits_a)}</div><div>{_side(ub, hits_b)}</div></div>")
    out.append(END_MARK)
    return "\n".join(out)


def patch_report(report: Path, section: str) -> bool:
    """Put ``section`` in place of the report's similarity section (or before its end)."""
    if not report.is_file():
        return False
    text = report.read_text(encoding="utf-8")
    a, b = text.find(BEGIN_MARK), text.find(END_MARK)
    if a >= 0 and b > a:
        text = text[:a] + section + text[b + len(END_MARK):]
    else:
        cut = text.rfind("</body>")
        text = (text[:cut] + section + text[cut:]) if cut >= 0 else text + section
    report.write_text(text, encoding="utf-8")
    return True


# ---------------------------------------------------------------- a graded folder

def read_folder(out: Path) -> tuple[str, list[dict]]:
    """The assignment's name and every row's answer cells, from a folder ``course grade`` wrote."""
    try:
        name = json.loads((out / "questions.json").read_text(encoding="utf-8"))["assignment"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"course similarity: {out} is not a folder course grade wrote "
                         f"(no questions.json): {exc}") from None
    subs = []
    for path in sorted((out / "results").glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        code = doc.get("answer_code")
        if isinstance(code, list):
            cells = [c for c in code if isinstance(c, dict) and isinstance(c.get("source"), str)
                     and isinstance(c.get("cell"), int)]
            subs.append({"file": str(doc.get("file", path.stem)), "id": str(doc.get("id", "")),
                         "answer_code": cells})
    subs.sort(key=lambda s: s["file"])
    return str(name), subs


def run(out: Path, threshold: float = THRESHOLD) -> tuple[list[Flag], float]:
    """Compare a graded folder's submissions; write similarity.csv and the report's section."""
    from .assignment import AssignmentError, load
    t0 = time.monotonic()
    name, subs = read_folder(out)
    try:
        course_code = load(name).given_code
    except AssignmentError:
        course_code = []
    master = master_answers(name)
    flags = compare(subs, course_code, master, threshold)
    seconds = time.monotonic() - t0
    write_csv(out, flags)
    patch_report(out / "report.html", html_section(flags, threshold, seconds, len(subs), master is not None))
    return flags, seconds


def after_grading(out: Path, threshold: float = THRESHOLD) -> str:
    """``course grade``'s hook: :func:`run` in a process of its own (a fixed hash seed, so the same
    submissions give the same flags; a memory cap and a time limit: it parses students' code). One
    line to print."""
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    try:
        proc = subprocess.run([sys.executable, "-m", "autograder.similarity", str(out), "--threshold",
                               str(threshold), "--here"], env=env, capture_output=True, text=True,
                              timeout=WORKER_SECONDS)
    except subprocess.TimeoutExpired:
        return f"similarity: not compared (over {WORKER_SECONDS} s)"
    lines = (proc.stdout or "").strip().splitlines()
    if proc.returncode != 0 or not lines:
        return f"similarity: not compared ({(proc.stderr or '').strip().splitlines()[-1:] or 'failed'})"
    return lines[-1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="course similarity",
                                description="Flag pairs of submissions whose answers are alike, in a "
                                            "folder course grade wrote (similarity.csv, report.html).")
    p.add_argument("out", type=Path, help="the folder course grade wrote")
    p.add_argument("--threshold", type=float, default=THRESHOLD,
                   help=f"flag at this score (default {THRESHOLD})")
    p.add_argument("--here", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not (args.out / "questions.json").is_file():
        print(f"course similarity: {args.out} is not a folder course grade wrote", file=sys.stderr)
        return 2
    if not args.here:
        print(after_grading(args.out, args.threshold))
        return 0
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
    except (ValueError, OSError):
        pass
    flags, seconds = run(args.out, args.threshold)
    pairs = sum(f.kind == "pair" for f in flags)
    print(f"similarity: {pairs} pair(s) and {len(flags) - pairs} alike to the master flagged in "
          f"{seconds:.1f} s -> {args.out / 'similarity.csv'} (flags to look at, not grades)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
