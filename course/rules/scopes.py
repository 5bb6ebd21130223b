"""The rules' first pass over a notebook's code: its scopes (module, functions, classes) and what
each binds (imports, definitions, parameters, assignments)."""
from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field
from typing import cast

from .allowed import ALLOWED_MODULES, ATTRIBUTE_BUILTINS
from .resolve import import_allowed, is_submodule, member
from .syntax import dunder, plain_string


@dataclass
class Binding:
    kind: str                  # module, object, star, def, class, param, walrus, other
    pos: tuple[int, int]       # (cell, line)
    modules: list[tuple[str, types.ModuleType | None]] = field(default_factory=list)
    objects: list[tuple[str, object]] = field(default_factory=list)
    value: ast.expr | None = None           # what a plain ``name = value`` binds it to
    node: ast.AST | None = None             # the class statement of a class


class Scope:
    def __init__(self, node: ast.AST | None, kind: str, parent: Scope | None) -> None:
        self.node, self.kind, self.parent = node, kind, parent    # kind: module/function/class/comp
        self.bound: dict[str, list[Binding]] = {}
        self.globals: set[str] = set()
        self.trusted: str | None = None      # "self" / "cls": the first parameter of a method
        self.owner: str | None = None        # the class a method belongs to

    def bind(self, name: str, binding: Binding) -> None:
        self.bound.setdefault(name, []).append(binding)


class Scopes:
    """What the first pass finds in a notebook: the module's scope, every inner scope by the id of
    its node, and the methods that rely on ``self`` being their own object (and their classes)."""

    def __init__(self) -> None:
        self.module = Scope(None, "module", None)
        self.by_node: dict[int, Scope] = {}
        self.trusting_methods: set[str] = set()
        self.trusting_classes: set[str] = set()
        self.given_cells: set[int] = set()      # the cells that are the course's (the blank notebook's)

    def anywhere(self) -> set[str]:
        """Every name bound in any scope of the notebook."""
        names = set(self.module.bound)
        for s in self.by_node.values():
            names |= set(s.bound)
        return names


def _is_method(node: ast.AST, parent: Scope) -> str | None:
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


def _private_use(node: ast.AST) -> bool:
    """``self._x`` / ``cls._x`` (not a dunder), or ``getattr(self, name)`` and the like with a name
    that is not a plain string: the method doing it trusts its class (:meth:`Binder.trusts`)."""
    if type(node) is ast.Attribute:
        return (type(node.value) is ast.Name and node.value.id in ("self", "cls")
                and node.attr.startswith("_") and not dunder(node.attr))
    return (type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in ATTRIBUTE_BUILTINS
            and len(node.args) >= 2 and type(node.args[0]) is ast.Name
            and node.args[0].id in ("self", "cls") and not plain_string(node.args[1]))


class Binder:
    """First pass: the scopes of the notebook's code and what each binds, into ``scopes``."""

    def __init__(self, scopes: Scopes) -> None:
        self.s = scopes

    def scope(self, node: ast.AST, parent: Scope, kind: str) -> Scope:
        s = Scope(node, kind, parent)
        self.s.by_node[id(node)] = s
        return s

    def trusts(self, scope: Scope | None) -> None:
        """The method around ``scope`` relies on its self being its own object."""
        while scope is not None and scope.owner is None:
            scope = scope.parent
        if scope is not None:
            # only a method's scope has an owner (:meth:`function`)
            assert isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and scope.owner is not None
            self.s.trusting_methods.add(scope.node.name)
            self.s.trusting_classes.add(scope.owner)

    def bind(self, scope: Scope, name: str, b: Binding) -> None:
        while scope.kind == "comp" and b.kind == "walrus":
            assert scope.parent is not None         # a comprehension's scope is inside another
            scope = scope.parent
        if name in scope.globals:
            scope = self.s.module
        scope.bind(name, b)

    def run(self, node: ast.AST, scope: Scope, cell: int) -> None:
        # every node's children are visited here, in this method, except a function's and a
        # comprehension's (the helpers below bind names and visit nothing; they take statements and
        # patterns, never a name deep in an expression): the stack grows as it always has, so the code
        # that is nested too deep to read (a RecursionError, course.rules.reading) stays the same
        kind = type(node)
        if type(node) is ast.Assign and all(type(t) is ast.Name for t in node.targets):
            self.bind_targets(node, scope, cell)
            self.run(node.value, scope, cell)
            return
        if _private_use(node):
            self.trusts(scope)
        if kind in _PLAIN:                     # most nodes bind nothing: straight to their children
            for child in ast.iter_child_nodes(node):
                self.run(child, scope, cell)
            return
        pos = (cell, getattr(node, "lineno", 0))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self.function(node, scope, cell, pos)
        elif isinstance(node, ast.ClassDef):
            self.bind(scope, node.name, Binding("class", pos, node=node))
            for n in node.decorator_list + node.bases + [k.value for k in node.keywords]:
                self.run(n, scope, cell)
            inner = self.scope(node, scope, "class")
            for stmt in node.body:
                self.run(stmt, inner, cell)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            self.comprehension(node, scope, cell)
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Global)):
            self.binds_only(node, scope, pos)
        elif isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                self.bind(scope, node.id, Binding("other", pos))
        elif isinstance(node, ast.NamedExpr):
            self.bind(scope, node.target.id, Binding("walrus", pos))
            self.run(node.value, scope, cell)
        else:
            self.bind_caught(node, scope, pos)
            for child in ast.iter_child_nodes(node):
                self.run(child, scope, cell)

    def bind_targets(self, node: ast.Assign, scope: Scope, cell: int) -> None:
        """``a = b = value``: each name bound to the value (an object of the notebook's own?)."""
        for t in cast("list[ast.Name]", node.targets):
            self.bind(scope, t.id, Binding("other", (cell, t.lineno), value=node.value))

    def binds_only(self, node: ast.Import | ast.ImportFrom | ast.Global, scope: Scope,
                   pos: tuple[int, int]) -> None:
        """A statement that binds names and has nothing to visit: an import, ``global``."""
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.bind(scope, a.asname, Binding("module", pos, [(a.name, import_allowed(a.name))]))
                else:
                    top = a.name.split(".")[0]
                    self.bind(scope, top, Binding("module", pos, [(top, import_allowed(top))]))
        elif isinstance(node, ast.ImportFrom):
            self.import_from(node, scope, pos)
        else:                                        # before any use of the names, as Python requires
            scope.globals |= set(node.names)

    def bind_caught(self, node: ast.AST, scope: Scope, pos: tuple[int, int]) -> None:
        """The names an ``except ... as`` or a ``match`` pattern binds (its children are visited by
        :meth:`run`)."""
        if isinstance(node, ast.ExceptHandler) and node.name:
            self.bind(scope, node.name, Binding("other", pos))
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            self.bind(scope, node.name, Binding("other", pos))
        if isinstance(node, ast.MatchMapping) and node.rest:
            self.bind(scope, node.rest, Binding("other", pos))

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: Scope, cell: int,
                 pos: tuple[int, int]) -> None:
        if not isinstance(node, ast.Lambda):
            self.bind(scope, node.name, Binding("def", pos))
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
                inner.bind(a.arg, Binding("param", pos))
                if a.annotation:
                    self.run(a.annotation, scope, cell)
        body = node.body if isinstance(node.body, list) else [node.body]
        for stmt in body:
            self.run(stmt, inner, cell)

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope: Scope,
                      cell: int) -> None:
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

    def import_from(self, node: ast.ImportFrom, scope: Scope, pos: tuple[int, int]) -> None:
        source = node.module or ""
        module = import_allowed(source) if not node.level else None
        for a in node.names:
            if a.name == "*":
                if module is not None:
                    names = getattr(module, "__all__", None) or [n for n in dir(module) if n[:1] != "_"]
                    for n in names:
                        if isinstance(n, str):
                            self.bind(scope, n, Binding("star", pos, [(source, module)]))
                continue
            bound = a.asname or a.name
            full = f"{source}.{a.name}"
            obj = None
            if module is not None and not a.name.startswith("_"):
                try:
                    obj = member(module, a.name)
                except Exception:
                    pass
            if isinstance(obj, types.ModuleType) or (module is None and full in ALLOWED_MODULES) \
                    or (module is not None and obj is None and is_submodule(module, a.name)):
                self.bind(scope, bound, Binding("module", pos, [(full, import_allowed(full))]))
            else:
                self.bind(scope, bound, Binding("object", pos, objects=[(full, obj)]))
