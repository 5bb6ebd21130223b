"""Which answers a set of files gives away: every class or function a student writes, found in them.

An *answer* is a class or function defined in a master's solution: in a cell tagged ``reference``
(the earlier weeks' answers that later notebooks give), or in the solution lines of an answer cell.
What the student notebook shows of it (its prompt, the scaffolding around the solution) is not the
answer, nor is what an earlier notebook's answer already has: an answer is the statements of its
definition that its prompt does not show and that no earlier answer has (08's ``Block`` is the
``causal`` it passes to its attention: the rest of it is 06's ``Block``).

A file *holds* an answer when one of its definitions (in a ``.py`` file; in a notebook's code cells;
in the code blocks of its markdown) has at least half of the answer's statements (:data:`SHARE`),
at least two of them, or one statement of it so long that it is the answer's own (:data:`TELLING`
AST nodes: 08's causal mask, ``torch.triu(torch.ones(L, L, dtype=torch.bool, ...), diagonal=1)``, in
TinyDenoiser's ``AllHeads``). Statements are compared as code, with comments and docstrings left out and
every plain name but the modules' (``torch``, ``nn``, ``F``, ``math``, ``np``), ``self`` and Python's
own replaced by ``_``: the same line with other variable names (``dots`` for ``energy``), or a class
of another name (``DenoiserBlock`` for ``Block``), is the same answer. Statements too small to tell
anything (``return x``, ``h = block(h)``, ``super().__init__()``) do not count.
"""
from __future__ import annotations

import ast
import builtins
import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path

from . import masters

SHARE = 0.5
MIN_STATEMENTS = 2
MIN_NODES = 6                       # a statement of fewer AST nodes tells nothing about an answer
TELLING = 18                        # one statement of this many nodes is enough
_SIZES: dict[str, int] = {}         # the size of every statement seen, by its text
KEPT_NAMES = {"self", "cls", "torch", "nn", "F", "math", "np"} | set(dir(builtins))
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Answer:
    notebook: str                   # NN_name of the master
    name: str                       # the class or function the student writes
    statements: frozenset[str]


@dataclass(frozen=True)
class Found:
    answer: Answer
    file: str                       # as the release names it (notebooks/08_causal.ipynb)
    holder: str                     # the definition there that holds it
    share: float                    # the fraction of the answer's statements it has


# ---------------------------------------------------------------- statements, compared as code

class _Anonymous(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(id=node.id if node.id in KEPT_NAMES else "_", ctx=node.ctx)

    def visit_arg(self, node: ast.arg) -> ast.arg:
        return ast.arg(arg="_")


def _size(node: ast.AST) -> int:
    return sum(1 for n in ast.walk(node) if not isinstance(n, ast.expr_context))


def _text(node: ast.AST) -> str:
    return ast.unparse(_Anonymous().visit(copy.deepcopy(node)))


def _header(node: ast.stmt) -> ast.AST | None:
    """What a compound statement says before its body (its test, loop or context), as an expression."""
    if isinstance(node, (ast.If, ast.While)):
        return node.test
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return ast.Tuple(elts=[node.target, node.iter], ctx=ast.Load())
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return ast.Tuple(elts=[i.context_expr for i in node.items], ctx=ast.Load())
    return None


def _trivial(node: ast.stmt) -> bool:
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):   # docstrings, ...
        return True
    return False


def statements(definition: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    """The statements inside a class or function (its methods' too), as compared: see the module."""
    found: set[str] = set()

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if _trivial(node):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                walk(node.body)
                continue
            inner = [getattr(node, f) for f in ("body", "orelse", "finalbody") if getattr(node, f, None)]
            inner += [h.body for h in getattr(node, "handlers", [])]
            if inner:
                head = _header(node)
                if head is not None and _size(head) >= MIN_NODES:
                    text = f"{type(node).__name__.lower()} {_text(head)}"
                    _SIZES[text] = _size(head)
                    found.add(text)
                for b in inner:
                    walk(b)
            elif _size(node) >= MIN_NODES:
                text = _text(node)
                _SIZES[text] = _size(node)
                found.add(text)

    walk(definition.body)
    return found


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def definitions(code: str,
                top: bool = False) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]]:
    """Every class and function in ``code`` by name (a method as ``DenoiserBlock.__init__``), at any
    depth (``top``: at its top level only); none when ``code`` is not Python."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, _DEFINITIONS):
                found.append((prefix + node.name, node))
                if not top:        # a class's methods are Class.method; what a function makes, its own
                    visit(node.body, f"{prefix}{node.name}." if isinstance(node, ast.ClassDef) else "")
            elif not top:
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, None) or [], prefix)

    visit(tree.body, "")
    return found


# ---------------------------------------------------------------- the answers, from the masters

def answers(names: list[str] | None = None) -> list[Answer]:
    """The answers of the masters ``names`` (default: all), in course order. An answer is what the
    notebook adds: its statements less those its prompt shows and those of the earlier notebooks'
    answers (08's ``Block`` is the ``causal`` it passes on; the rest is 06's ``Block``)."""
    found: list[Answer] = []
    earlier: set[str] = set()
    for name in masters.masters():
        this_week: set[str] = set()
        for cell in masters.answer_cells(masters.read_master(name)):
            if cell.cell_type != "code":
                continue
            source = masters.cell_source(cell)
            shown = {label: statements(node)
                     for label, node in definitions(masters.split_solution(source)[1], top=True)}
            for label, node in definitions(masters.answer_code(source), top=True):
                this_week |= statements(node)
                own = frozenset(statements(node) - shown.get(label, set()) - earlier)
                if own and (names is None or name in names) and Answer(name, label, own) not in found:
                    found.append(Answer(name, label, own))
        earlier |= this_week
    return found


# ---------------------------------------------------------------- the code in a file

def code_in(path: Path) -> list[str]:
    """The Python a file shows: a .py file whole; a notebook's code cells (IPython's ``%`` and ``!``
    lines left out) and its markdown's fenced code blocks; a markdown file's fenced code blocks."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".py":
        return [text]
    if path.suffix == ".md":
        return _FENCE.findall(text)
    if path.suffix != ".ipynb":
        return []
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:
        return []
    code = []
    for cell in cells:
        src = "".join(cell.get("source", []))
        if cell.get("cell_type") == "code":
            code.append("\n".join(line for line in src.splitlines()
                                  if not line.lstrip().startswith(("%", "!"))))
        elif cell.get("cell_type") == "markdown":
            code += _FENCE.findall(src)
    return code


def holds(answer: Answer, definition: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> float:
    """The share of ``answer``'s statements that ``definition`` has; 0 when it does not hold it."""
    return _share(answer, statements(definition))


def _share(answer: Answer, mine: set[str]) -> float:
    common = answer.statements & mine
    share = len(common) / len(answer.statements)
    if share >= SHARE and len(common) >= min(MIN_STATEMENTS, len(answer.statements)):
        return share
    return share if any(_SIZES[s] >= TELLING for s in common) else 0.0


def find(files: list[tuple[Path, str]], wanted: list[Answer]) -> list[Found]:
    """Every answer of ``wanted`` that one of ``files`` ((path on disk, name shown)) holds."""
    best: dict[tuple[Answer, str], tuple[tuple, Found]] = {}     # per answer and file, its best holder:
    for path, shown in files:                                     # the most of the answer, then a class,
        for code in code_in(path):                                # then the smallest definition
            for label, node in definitions(code):
                mine = statements(node)
                for answer in wanted:
                    share = _share(answer, mine)
                    if not share:
                        continue
                    rank = (-share, not isinstance(node, ast.ClassDef), len(mine))
                    key = (answer, shown)
                    if key not in best or rank < best[key][0]:
                        best[key] = (rank, Found(answer, shown, label, round(share, 2)))
    return sorted((f for _, f in best.values()), key=lambda f: (f.answer.notebook, f.answer.name, f.file))
