"""Similarity flags, normalising (see :mod:`autograder.similarity`): one answer cell as normalised lines,
so that renaming, comments, moved definitions and equivalent tensor calls change no fingerprint."""
from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

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
        node: ast.AST
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
        if inplace and isinstance(f, ast.Attribute):
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

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
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


def _as_store(node: ast.expr) -> ast.expr | None:
    """A name or attribute chain as an assignment's target (None for anything else)."""
    if not _dotted(node):
        return None
    import copy
    node = copy.deepcopy(node)
    assert isinstance(node, (ast.Name, ast.Attribute))      # what _dotted reads
    node.ctx = ast.Store()
    return node


def _as_load(node: ast.expr) -> ast.expr:
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
        _emit(cast("list[ast.stmt]", body), out)          # the statements above have a body
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
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            defs = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            rest = [s for s in node.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            node.body = rest + _by_name(defs)
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if tree.body and all(isinstance(s, definitions) for s in tree.body):
        tree.body = _by_name(tree.body)


def _by_name(defs: Sequence[ast.stmt]) -> list[ast.stmt]:
    """``defs`` sorted by name, then text; the text (a costly unparse) only where names tie, which
    gives the same order."""
    names = [getattr(d, "name", "") for d in defs]
    tied = {n for n in names if names.count(n) > 1}
    return sorted(defs, key=lambda d: (getattr(d, "name", ""),
                                       ast.unparse(d) if getattr(d, "name", "") in tied else ""))


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

