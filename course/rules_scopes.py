"""The rules' first pass over a notebook's code: its scopes (module, functions, classes) and what
each binds (imports, definitions, parameters, assignments). See :mod:`course.rules`."""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .rules_allowed import (
    _ATTRIBUTE_BUILTINS,
    ALLOWED_MODULES,
    _dunder,
    _import,
    _is_submodule,
    _member,
    _plain_string,
)

if TYPE_CHECKING:
    from .rules import _Reading


@dataclass
class _Binding:
    kind: str                  # module, object, star, def, class, param, other
    pos: tuple[int, int]       # (cell, line)
    modules: list[tuple[str, types.ModuleType | None]] = field(default_factory=list)
    objects: list[tuple[str, object]] = field(default_factory=list)


class _Scope:
    def __init__(self, node: ast.AST | None, kind: str, parent: _Scope | None) -> None:
        self.node, self.kind, self.parent = node, kind, parent    # kind: module/function/class/comp
        self.bound: dict[str, list[_Binding]] = {}
        self.globals: set[str] = set()
        self.trusted: str | None = None      # "self" / "cls": the first parameter of a method
        self.owner: str | None = None        # the class a method belongs to

    def bind(self, name: str, binding: _Binding) -> None:
        self.bound.setdefault(name, []).append(binding)


@dataclass
class _Finding:
    cell: int
    node: ast.AST
    what: str
    kind: str


def _is_method(node: ast.AST, parent: _Scope) -> str | None:
    """'self' or 'cls' when ``node`` is a method whose first parameter is its object (or class)."""
    if parent.kind != "class" or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
    params = node.args.posonlyargs + node.args.args
    if "staticmethod" in decorators or not params:
        return None
    first = params[0].arg
    if "classmethod" in decorators:
        return "cls" if first == "cls" else None
    return "self" if first == "self" else None


_PLAIN = {ast.Attribute, ast.Expr, ast.BinOp, ast.Constant, ast.Subscript, ast.keyword, ast.Tuple, ast.List,
          ast.Return, ast.Compare, ast.UnaryOp, ast.BoolOp, ast.IfExp, ast.Slice, ast.Dict, ast.Set,
          ast.JoinedStr, ast.FormattedValue, ast.If, ast.For, ast.While, ast.With, ast.withitem, ast.Assign,
          ast.AugAssign, ast.Starred, ast.Assert, ast.Raise, ast.Try, ast.Pass, ast.Break, ast.Continue,
          ast.Load, ast.Store, ast.Del, ast.Delete, ast.Yield, ast.YieldFrom, ast.Await, ast.AnnAssign}


class _Binder:
    """First pass: the scopes of the notebook's code and what each binds."""

    def __init__(self, reading: _Reading) -> None:
        self.r = reading

    def scope(self, node: ast.AST, parent: _Scope, kind: str) -> _Scope:
        s = _Scope(node, kind, parent)
        self.r.scopes[id(node)] = s
        return s

    def trusts(self, scope: _Scope) -> None:
        """The method around ``scope`` relies on its self being its own object."""
        while scope is not None and scope.owner is None:
            scope = scope.parent
        if scope is not None:
            self.r.trusting_methods.add(scope.node.name)
            self.r.trusting_classes.add(scope.owner)

    def bind(self, scope: _Scope, name: str, b: _Binding) -> None:
        while scope.kind == "comp" and b.kind == "walrus":
            scope = scope.parent
        if name in scope.globals:
            scope = self.r.module
        scope.bind(name, b)

    def run(self, node: ast.AST, scope: _Scope, cell: int) -> None:
        kind = type(node)
        if kind in _PLAIN:                     # most nodes bind nothing: straight to their children
            if kind is ast.Attribute and type(node.value) is ast.Name and node.value.id in ("self", "cls") \
                    and node.attr.startswith("_") and not _dunder(node.attr):
                self.trusts(scope)
            for child in ast.iter_child_nodes(node):
                self.run(child, scope, cell)
            return
        if kind is ast.Call and type(node.func) is ast.Name and node.func.id in _ATTRIBUTE_BUILTINS \
                and len(node.args) >= 2 and type(node.args[0]) is ast.Name \
                and node.args[0].id in ("self", "cls") and not _plain_string(node.args[1]):
            self.trusts(scope)
        pos = (cell, getattr(node, "lineno", 0))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not isinstance(node, ast.Lambda):
                self.bind(scope, node.name, _Binding("def", pos))
                for d in node.decorator_list:
                    self.run(d, scope, cell)
                if node.returns:
                    self.run(node.returns, scope, cell)
            args = node.args
            for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
                self.run(d, scope, cell)
            inner = self.scope(node, scope, "function")
            trusted = _is_method(node, scope)
            if trusted:
                inner.trusted = trusted
                inner.owner = scope.node.name if isinstance(scope.node, ast.ClassDef) else None
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None:
                    inner.bind(a.arg, _Binding("param", pos))
                    if a.annotation:
                        self.run(a.annotation, scope, cell)
            body = node.body if isinstance(node.body, list) else [node.body]
            for stmt in body:
                self.run(stmt, inner, cell)
            return
        if isinstance(node, ast.ClassDef):
            self.bind(scope, node.name, _Binding("class", pos))
            for n in node.decorator_list + node.bases + [k.value for k in node.keywords]:
                self.run(n, scope, cell)
            inner = self.scope(node, scope, "class")
            for stmt in node.body:
                self.run(stmt, inner, cell)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            self.run(node.generators[0].iter, scope, cell)
            inner = self.scope(node, scope, "comp")
            for i, g in enumerate(node.generators):
                self.run(g.target, inner, cell)
                if i:
                    self.run(g.iter, inner, cell)
                for c in g.ifs:
                    self.run(c, inner, cell)
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                self.run(part, inner, cell)
            return
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.bind(scope, a.asname, _Binding("module", pos, [(a.name, _import(a.name))]))
                else:
                    top = a.name.split(".")[0]
                    self.bind(scope, top, _Binding("module", pos, [(top, _import(top))]))
            return
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            module = _import(source) if not node.level else None
            for a in node.names:
                if a.name == "*":
                    if module is not None:
                        names = getattr(module, "__all__", None) or [n for n in dir(module) if n[:1] != "_"]
                        for n in names:
                            if isinstance(n, str):
                                self.bind(scope, n, _Binding("star", pos, [(source, module)]))
                    continue
                bound = a.asname or a.name
                full = f"{source}.{a.name}"
                obj = None
                if module is not None and not a.name.startswith("_"):
                    try:
                        obj = _member(module, a.name)
                    except Exception:
                        pass
                if isinstance(obj, types.ModuleType) or (module is None and full in ALLOWED_MODULES) \
                        or (module is not None and obj is None and _is_submodule(module, a.name)):
                    self.bind(scope, bound, _Binding("module", pos, [(full, _import(full))]))
                else:
                    self.bind(scope, bound, _Binding("object", pos, objects=[(full, obj)]))
            return
        if isinstance(node, ast.Global):           # before any use of the names, as Python requires
            scope.globals |= set(node.names)
            return
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                self.bind(scope, node.id, _Binding("other", pos))
            return
        if isinstance(node, ast.NamedExpr):
            self.bind(scope, node.target.id, _Binding("walrus", pos))
            self.run(node.value, scope, cell)
            return
        if isinstance(node, ast.ExceptHandler) and node.name:
            self.bind(scope, node.name, _Binding("other", pos))
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            self.bind(scope, node.name, _Binding("other", pos))
        if isinstance(node, ast.MatchMapping) and node.rest:
            self.bind(scope, node.rest, _Binding("other", pos))
        for child in ast.iter_child_nodes(node):
            self.run(child, scope, cell)


