"""The rules on attribute chains: a chain that starts at a module (or an imported object) is
resolved against the real thing, step by step; on other objects only public names, a method's own
``self._x`` and the everyday dunders are allowed."""
from __future__ import annotations

import ast
import functools
import types

from .allowed import ALLOWED_MODULES, DUNDER_ATTRIBUTES, INTERNALS, NAMEDTUPLE, SPECIAL_METHODS
from .findings import Kind
from .resolve import CHANGES, NotAllowed, judge, module_kind, step
from .syntax import dunder, source_text
from .visitor import Visitor


class Chains(Visitor):
    def chain(self, node: ast.expr) -> tuple[ast.AST, list[str]]:
        attrs = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        return node, attrs[::-1]

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.attribute(node)

    def attribute(self, node: ast.Attribute) -> None:
        root, attrs = self.chain(node)
        for a in attrs:
            self.reach(node, f".{a}")
        as_value = isinstance(node.ctx, ast.Load) and id(node) not in self.shown
        changes = not isinstance(node.ctx, ast.Load)
        trusted = False
        if isinstance(root, ast.Name):
            kind, info = self.kind_of(root)
            if kind in ("module", "object", "star"):       # resolved against the real module or object
                is_module = kind == "module"
                self.resolve(node, root.id, [(name, obj, is_module) for name, obj in info], attrs, as_value)
                if changes:
                    self.found(node, f"changes {source_text(node)} {CHANGES}", Kind.FAR)
                return
            if kind == "self":
                trusted = True
            elif kind == "class" and attrs[0] in self.scopes.trusting_methods:
                self.found(node, f"takes {root.id}.{attrs[0]} off its class (a method that uses self's "
                                 "private attributes runs on its own objects only)")
            elif kind == "builtin" and root.id == "get_ipython":
                self.found(node, "uses get_ipython() other than for a magic")
            elif kind != "class":
                self.visit(root)
        elif changes and isinstance(root, ast.Call) and isinstance(root.func, ast.Name) \
                and root.func.id == "type":
            self.found(node, f"changes {source_text(node)} {CHANGES}", Kind.FAR)
            self.visit(root)
            return
        elif isinstance(root, ast.Call) and isinstance(root.func, ast.Name) and not root.keywords \
                and root.func.id == "super" and self.kind_of(root.func)[0] == "builtin":
            # super() and super(Class, self) are bound to self; super(Class, other) may not be
            other = root.args[1] if len(root.args) > 1 else None
            bound = other is None or (isinstance(other, ast.Name) and self.kind_of(other)[0] == "self")
            trusted = bound
            if not bound and attrs[0] in self.scopes.trusting_methods:
                self.found(node, f"takes super(...).{attrs[0]} off its class (a method that uses self's "
                                 "private attributes runs on its own objects only)")
            for arg in root.args:
                self.visit_value(arg, classes_ok=True)
        else:
            if isinstance(root, ast.Call) and isinstance(root.func, ast.Name) and root.func.id == "type" \
                    and attrs[0] in self.scopes.trusting_methods:
                self.found(node, f"takes type(...).{attrs[0]} off its class (a method that uses self's "
                                 "private attributes runs on its own objects only)")
            self.visit(root)
        self.plain_attributes(node, root, attrs, trusted)

    def plain_attributes(self, node: ast.AST, root: ast.AST, attrs: list[str], trusted: bool) -> None:
        """Attributes of objects that are not modules: public names, self's own, few dunders."""
        for i, a in enumerate(attrs):
            nxt = attrs[i + 1] if i + 1 < len(attrs) else None
            text = ".".join([source_text(root), *attrs[:i + 1]])
            if dunder(a):
                if a in DUNDER_ATTRIBUTES or (a == "__class__" and nxt in ("__name__", "__qualname__")) \
                        or (trusted and i == 0 and a in SPECIAL_METHODS):     # super().__repr__()
                    continue
                self.found(node, f"uses {text} (a special attribute that is not allowed)",
                           Kind.FAR if a in ("__globals__", "__builtins__", "__code__", "__closure__")
                           else Kind.RULE, hides=True)
                return
            if a in INTERNALS:
                self.found(node, f"uses {text} (the interpreter's frames and code are not allowed)", Kind.FAR)
                return
            if a == "obj" and not (trusted and i == 0):
                self.found(node, f"uses {text} (an error's object, AttributeError.obj, is not allowed)",
                           Kind.FAR)
                return
            if a.startswith("_") and not (trusted and i == 0) and a not in NAMEDTUPLE:
                self.found(node, f"uses {text} (a private attribute: only a method's own self._x is allowed)")
                return

    def resolve(self, node: ast.AST, root: str, starts: list[tuple[str, object, bool]],
                attrs: list[str], as_value: bool) -> None:
        """A chain that starts at a module or an imported object, resolved against the real thing."""
        for start_name, obj, is_module in starts:
            text = root
            self.reach(node, ".".join([start_name, *attrs]))
            self.reach(node, start_name, obj)
            if is_module and obj is None and start_name in ALLOWED_MODULES:
                continue                         # allowed, but not installed here: nothing to resolve
            if is_module and obj is None:
                self.found(node, f"uses {'.'.join([root, *attrs])}: {start_name} is not allowed",
                           module_kind(start_name))
                continue
            if obj is None:
                continue
            for i, a in enumerate(attrs):
                text = f"{text}.{a}"
                last = i == len(attrs) - 1
                if dunder(a):
                    if not (last and a in DUNDER_ATTRIBUTES):
                        self.found(node, f"uses {text} (a special attribute that is not allowed)", Kind.FAR)
                    break
                if a.startswith("_"):
                    private = ", a private name" if last else f": {a} is a private name"
                    self.found(node, f"uses {'.'.join([root, *attrs])}{private} (not allowed)")
                    break
                if a in INTERNALS:
                    self.found(node, f"uses {text} (the interpreter's frames and code are not allowed)",
                               Kind.FAR)
                    break
                try:
                    obj = step(obj, a)
                except NotAllowed as exc:
                    what = text if str(exc) == text else f"{text} ({exc})"
                    self.found(node, f"uses {what}, which is not allowed", module_kind(str(exc)))
                    break
                except Exception:
                    break                       # it does not resolve: a typo breaks no rule
                self.reach(node, ".".join([start_name, *attrs[:i + 1]]), obj)
                verdict = judge(obj, text)
                if verdict:
                    self.found(node, f"uses {verdict[1]}", verdict[0])
                    break
                if obj is functools.wraps and id(node) not in self.plain_wraps:
                    self.found(node, f"uses {text} other than as @{text}(function) (it copies the attributes "
                                     "it is told by name)", Kind.FAR)
                    break
            else:
                if as_value and isinstance(obj, types.ModuleType):
                    self.found(node, f"uses the module {text} as a value (only as in {text}.name)",
                               hides=True)
