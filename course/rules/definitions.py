"""The rules on definitions and imports: special methods, decorators of methods that trust self,
annotations (they are code), the scopes of functions, classes and comprehensions, what an import
may bring in, and strings that name the process's own internals."""
from __future__ import annotations

import ast

from .allowed import ALLOWED_MODULES, DENIED_NAMES, ONLY_NAMES, SPECIAL_METHODS
from .findings import Kind
from .resolve import import_allowed, is_submodule, judge, member, module_kind
from .syntax import dunder, plain_string
from .visitor import Visitor


class Definitions(Visitor):
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if dunder(node.name) and node.name not in SPECIAL_METHODS:
            self.found(node, f"defines {node.name} (of the special methods only the usual ones "
                             "(__init__, __call__, __repr__, __len__, __getitem__, ...) are allowed)")
        inner = self.scopes.by_node.get(id(node))
        trusting = inner is not None and inner.trusted == "self" \
            and node.name in self.scopes.trusting_methods and inner.owner in self.scopes.trusting_classes
        for d in node.decorator_list:
            if trusting and not self.plain_decorator(d):
                self.found(d, f"wraps {node.name}, a method that uses self's private attributes, in a "
                              "decorator of the notebook's own (it runs on its own objects only)")
            self.visit_value(d, classes_ok=True)         # @Class: the class is called, as Class(f)
        self.arguments(node.args)
        if node.returns is not None:
            self.annotation(node.returns)
        self.inside(node, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def plain_decorator(self, d: ast.AST) -> bool:
        """A decorator of the libraries' (property, torch.no_grad(), functools.cached_property, ...)."""
        if isinstance(d, ast.Name) and self.kind_of(d)[0] == "builtin":
            return d.id in ("property", "classmethod", "staticmethod")
        if isinstance(d, ast.Attribute) and d.attr in ("setter", "getter", "deleter"):
            return True
        root = d.func if isinstance(d, ast.Call) else d
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and self.kind_of(root)[0] in ("module", "object", "star")

    def arguments(self, args: ast.arguments) -> None:
        for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(d)
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None and a.annotation is not None:
                self.annotation(a.annotation)

    def annotation(self, node: ast.AST) -> None:
        """Annotations are code (typing may evaluate those written as strings)."""
        if plain_string(node):
            try:
                code = ast.parse(node.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self.found(node, "has an annotation in a string that is not code")
                return
            outer, self.anchor = self.anchor, self.anchor or node
            self.visit(code)
            self.anchor = outer
            return
        self.visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        self.annotation(node.annotation)
        if node.value is not None:
            self.visit(node.value)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.arguments(node.args)
        self.inside(node, [node.body])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for n in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            if isinstance(n, ast.Name):
                self.visit_value(n, classes_ok=True)
            else:
                self.visit(n)
        self.inside(node, node.body)

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                      parts: list[ast.AST]) -> None:
        self.visit(node.generators[0].iter)
        outer = self.scope
        self.scope = self.scopes.by_node.get(id(node), outer)
        for i, g in enumerate(node.generators):
            self.visit(g.target)
            if i:
                self.visit(g.iter)
            for c in g.ifs:
                self.visit(c)
        for p in parts:
            self.visit(p)
        self.scope = outer

    def visit_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:
        self.comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self.comprehension(node, [node.key, node.value])

    # -- imports
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.reach(node, a.name, import_allowed(a.name))
            top = a.name.split(".")[0]
            for name in {a.name, *([] if a.asname else [top])}:
                if name not in ALLOWED_MODULES:
                    self.found(node, f"imports {name}, which is not allowed", module_kind(name))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = node.module or ""
        module = import_allowed(source) if not node.level else None
        self.reach(node, source, module)
        for a in node.names:
            if a.name != "*":
                try:
                    self.reach(node, f"{source}.{a.name}", member(module, a.name) if module else None)
                except Exception:
                    self.reach(node, f"{source}.{a.name}")
        if node.level:
            self.found(node, "imports from a relative module, which is not allowed")
            return
        if source not in ALLOWED_MODULES:
            self.found(node, f"imports from {source}, which is not allowed", module_kind(source))
            return
        if module is None:
            return
        for a in node.names:
            if a.name == "*":
                continue
            shown = f"{source}.{a.name}"
            if a.name.startswith("_") and a.name != "__future__":
                self.found(node, f"imports {shown}, a private name (not allowed)")
                continue
            only, denied = ONLY_NAMES.get(source), DENIED_NAMES.get(source, ())
            if (only is not None and a.name not in only) or a.name in denied:
                self.found(node, f"imports {shown}, which is not allowed", module_kind(source))
                continue
            if shown not in ALLOWED_MODULES and is_submodule(module, a.name):
                self.found(node, f"imports {shown}, which is not allowed", module_kind(shown))
                continue
            try:
                obj = member(module, a.name)
            except Exception:
                continue
            verdict = judge(obj, shown)
            if verdict:
                self.found(node, f"imports {verdict[1]}", verdict[0])

    # -- strings
    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and ("/proc/" in node.value or "/dev/fd" in node.value):
            self.found(node, "reads /proc or /dev/fd (the process's own internals)", Kind.FAR)
