"""The base of the rules' second pass: where the visitor is (cell, scope), what a name refers to
where it is used, and the findings it records. :mod:`course.rules.checker` puts the jobs together."""
from __future__ import annotations

import ast
import builtins
import functools
from collections.abc import Iterable

from .allowed import (
    ATTRIBUTE_BUILTINS,
    CODE_FROM_STRINGS,
    CONVENTIONAL,
    DUNDER_NAMES,
    IPYTHON_NAMES,
    NAMESPACES,
    SPECIAL_METHODS,
)
from .findings import Finding, Kind
from .resolve import import_allowed, judge
from .scopes import Binding, Scope, Scopes
from .syntax import dunder


def _builtin_use(name: str) -> tuple[str, Kind, bool] | None:
    """What using the built-in ``name`` as a value does against the rules: (what, kind, hides) for
    :meth:`Visitor.found`, None when it is allowed. (Nothing but set lookups: it is called at the
    bottom of an expression, as deep in the stack as the reading goes.)"""
    if name in CODE_FROM_STRINGS:
        return f"runs code built at run time ({name})", Kind.FAR, False
    if name in NAMESPACES:
        return f"reads a namespace ({name})", Kind.FAR, False
    if name == "breakpoint":
        return "uses breakpoint", Kind.RULE, False
    if name in ATTRIBUTE_BUILTINS:
        return f"passes {name} around as a value (it may only be called)", Kind.RULE, True
    if name == "get_ipython":
        return "uses get_ipython() other than for a magic", Kind.RULE, False
    return None


class Visitor(ast.NodeVisitor):
    """Walks one cell with the scopes of the first pass; records findings tied to their nodes, and
    what each node reaches of the modules' objects (for an exercise's own rules, :mod:`.exercise`)."""

    def __init__(self, scopes: Scopes, findings: list[Finding], anywhere: set[str], cell: int,
                 reached: dict[int, list[tuple[str, object]]]) -> None:
        self.scopes = scopes
        self.findings = findings
        self.reached = reached                  # {id(node): [(dotted name, object or None)]}
        self.anywhere = anywhere                # every name the notebook binds, in any scope
        self.cell = cell
        self.scope = scopes.module
        self.shown: set[int] = set()            # nodes whose value may be a module (help(F), ...)
        self.anchor: ast.AST | None = None      # the node of the notebook's code a made-up node stands for
        self.plain_wraps: set[int] = set()       # functools.wraps called with the wrapped function only

    def found(self, node: ast.AST, what: str, kind: Kind = Kind.RULE, hides: bool = False) -> None:
        self.findings.append(Finding(self.cell, self.anchor or node, what, kind, hides))

    def reach(self, node: ast.AST, name: str, obj: object = None) -> None:
        """``node`` reaches ``name`` (a module's object, by its full dotted name; an attribute of any
        object as ``.name``), which is ``obj`` when it resolved here."""
        self.reached.setdefault(id(self.anchor or node), []).append((name, obj))

    def inside(self, node: ast.AST, body: Iterable[ast.AST | None]) -> None:
        outer = self.scope
        self.scope = self.scopes.by_node.get(id(node), outer)
        for n in body:
            if n is not None:
                self.visit(n)
        self.scope = outer

    def lookup(self, name: str) -> tuple[Scope | None, list[Binding]]:
        s: Scope | None
        s, first = self.scope, True
        while s is not None:
            if s.kind == "class" and not first:
                s = s.parent
                continue
            if name in s.globals:
                break
            if name in s.bound:
                return s, s.bound[name]
            first = False
            s = s.parent
        module = self.scopes.module
        return (module, module.bound[name]) if name in module.bound else (None, [])

    def kind_of(self, node: ast.Name) -> tuple[str, list]:
        """What a name refers to where it is used: module (with [(name, module)]), object (imported
        objects), star, self (a method's own object), builtin, class (a notebook class whose
        methods trust self), or local (the notebook's own value)."""
        name = node.id
        scope, bindings = self.lookup(name)
        if not bindings:
            if name in CONVENTIONAL and name not in self.anywhere:
                return "module", [(CONVENTIONAL[name], import_allowed(CONVENTIONAL[name]))]
            if name in IPYTHON_NAMES or hasattr(builtins, name):
                return "builtin", []
            return "local", []
        modules = [m for b in bindings if b.kind == "module" for m in b.modules]
        if modules:
            return "module", modules
        if name in ("self", "cls") and scope is not None and scope.trusted == name \
                and all(b.kind == "param" for b in bindings):
            return "self", []
        kinds = {b.kind for b in bindings}
        if "object" in kinds:                 # an imported object (perhaps also bound otherwise)
            return "object", [o for b in bindings for o in b.objects]
        if "star" in kinds:
            return "star", [(f"{src}.{name}", getattr(mod, "__dict__", {}).get(name)) for b in bindings
                            if b.kind == "star" for src, mod in b.modules]
        if name in CODE_FROM_STRINGS | NAMESPACES | ATTRIBUTE_BUILTINS | {"breakpoint", "get_ipython"}:
            # the notebook's own function of that name counts only if defined before this use
            here = (self.cell, getattr(node, "lineno", 0))
            if scope is self.scopes.module and not any(b.kind in ("def", "class") and b.pos < here
                                                       for b in bindings):
                return "builtin", []
        if "class" in kinds and name in self.scopes.trusting_classes:
            return "class", []
        return "local", []

    # -- names
    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.visit_value(node)
        elif dunder(node.id) and node.id not in DUNDER_NAMES \
                and not (self.scope.kind == "class" and node.id in SPECIAL_METHODS):
            self.found(node, f"uses {node.id}")

    def visit_value(self, node: ast.AST, classes_ok: bool = False) -> None:
        """A name or expression used as a value."""
        if not isinstance(node, ast.Name):
            self.visit(node)
            return
        name = node.id
        if dunder(name):
            if name not in DUNDER_NAMES:
                far = name in ("__builtins__", "__import__")
                self.found(node, f"uses {name}", Kind.FAR if far else Kind.RULE)
            return
        kind, info = self.kind_of(node)
        if kind in ("module", "star", "object"):
            for shown, obj in info:
                self.reach(node, shown, obj)
        if kind == "module" and id(node) not in self.shown:
            self.found(node, f"uses the module {name} as a value (only as in {name}.name)", hides=True)
        elif kind in ("star", "object"):
            for shown, obj in info:
                verdict = judge(obj, shown) if obj is not None and kind == "star" else None
                if verdict:
                    self.found(node, f"uses {verdict[1]}", verdict[0])
                if obj is functools.wraps and id(node) not in self.plain_wraps:
                    self.found(node, f"uses {name} other than as @{name}(function) (it copies the attributes "
                                     "it is told by name)", Kind.FAR)
        elif kind == "builtin":
            use = _builtin_use(name)
            if use is not None:
                self.found(node, *use)
        elif kind == "class" and not classes_ok and id(node) not in self.shown:
            self.found(node, f"passes the class {name} around (its methods use self's private attributes, "
                             "so they run on its own objects only)")
        elif kind == "local" and self.scope.kind == "class" and name in self.scopes.trusting_methods \
                and isinstance(self.scope.node, ast.ClassDef):
            self.found(node, f"passes the method {name} around (it uses self's private attributes, so it "
                             "runs on its own objects only)")
