"""The rules on calls: ``getattr`` and friends, ``vars``, ``get_ipython()`` and its magics, the
keywords that load pickled code or start worker processes."""
from __future__ import annotations

import ast

from .allowed import ATTRIBUTE_BUILTINS, MAGIC_METHODS, MAY_SHOW_MODULES
from .chains import Chains
from .findings import Kind
from .magics import computed_magic
from .resolve import CHANGES
from .syntax import plain_string, plain_strings, source_text


class Calls(Chains):
    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        for k in node.keywords:
            self.keyword_rules(node, k)
        if len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
            self.plain_wraps.add(id(f))             # functools.wraps(f): copies the usual attributes only
        if (f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)) == "DataLoader" \
                and len(node.args) > 5 and not any(isinstance(a, ast.Starred) for a in node.args[:6]):
            self.workers(node, node.args[5])             # DataLoader(data, 1, False, None, None, 2)
        if isinstance(f, ast.Name):
            kind = self.kind_of(f)[0]
            if kind == "builtin" and f.id in ATTRIBUTE_BUILTINS and len(node.args) >= 2:
                self.attribute_builtin(node)
                return
            if kind == "builtin" and f.id == "vars" and node.args:
                # vars(x) is x.__dict__: not allowed, but it reads no namespace
                module = isinstance(node.args[0], ast.Name) and self.kind_of(node.args[0])[0] == "module"
                self.found(node, f"reads the attributes of {source_text(node.args[0])} by name (vars)",
                           Kind.FAR if module else Kind.RULE, hides=True)
                for a in node.args:
                    self.visit(a)
                return
            if kind == "builtin" and f.id == "get_ipython":
                self.found(node, "uses get_ipython() other than for a magic")
                return
            if kind == "builtin" and f.id in MAY_SHOW_MODULES:
                for a in node.args:
                    self.shown.add(id(a))
            if kind == "builtin" and f.id in ("isinstance", "issubclass", "super"):
                self.visit_value(f)
                for a in node.args:
                    for n in ast.walk(a):
                        if isinstance(n, ast.Name) and self.kind_of(n)[0] == "class":
                            self.shown.add(id(n))
                    self.visit_value(a, classes_ok=True) if isinstance(a, ast.Name) else self.visit(a)
                return
            if kind == "class":                        # making an object of the class: fine
                for a in node.args + [k.value for k in node.keywords]:
                    self.visit(a)
                return
        shell = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call) \
            and isinstance(f.value.func, ast.Name)
        if shell and f.value.func.id == "get_ipython" and self.kind_of(f.value.func)[0] == "builtin":
            if computed_magic(node) or f.attr not in MAGIC_METHODS or not plain_strings(node.args) \
                    or node.keywords:
                self.found(node, f"runs code built at run time ({f.attr})" if f.attr.startswith("run_")
                           else f"uses get_ipython().{f.attr}", Kind.FAR)
            return
        self.generic_visit(node)

    def attribute_builtin(self, node: ast.Call) -> None:
        """getattr(x, "name") is x.name; with a computed name, only on self."""
        f = node.func
        target, name = node.args[0], node.args[1]
        if plain_string(name) and name.value.isidentifier():
            ctx = ast.Store() if f.id in ("setattr", "delattr") else ast.Load()
            synth = ast.copy_location(ast.Attribute(value=target, attr=name.value, ctx=ctx), node)
            if f.id == "hasattr":
                self.shown.add(id(synth))
            outer, self.anchor = self.anchor, self.anchor or node
            self.attribute(synth)
            self.anchor = outer
        elif isinstance(target, ast.Name) and self.kind_of(target)[0] == "self":
            self.visit(name)
        else:
            module = isinstance(target, ast.Name) and self.kind_of(target)[0] == "module"
            self.found(node, f"looks up an attribute of {source_text(target)} by a computed name "
                             f"({f.id}: only on self)", Kind.FAR if module else Kind.RULE, hides=True)
            self.shown.add(id(target))              # said already: not also "a module as a value"
            self.visit(target)
            self.visit(name)
        for rest in node.args[2:]:
            self.visit(rest)
        if f.id in ("setattr", "delattr") and not plain_string(name) and isinstance(target, ast.Name) \
                and self.kind_of(target)[0] == "module":
            self.found(node, f"changes {target.id} with {f.id} {CHANGES}", Kind.FAR)

    def keyword_rules(self, node: ast.Call, k: ast.keyword) -> None:
        if k.arg == "num_workers" or (k.arg is None and isinstance(k.value, ast.Dict) and any(
                plain_string(key) and key.value == "num_workers" for key in k.value.keys)):
            value = k.value if k.arg else next(v for key, v in zip(k.value.keys, k.value.values, strict=True)
                                               if plain_string(key) and key.value == "num_workers")
            self.workers(node, value)
        elif k.arg == "weights_only" and not (isinstance(k.value, ast.Constant) and k.value.value is True):
            self.found(node, "loads pickled code (weights_only is not True)", Kind.FAR)
        elif k.arg == "pickle_module":
            self.found(node, "loads pickled code (pickle_module)", Kind.FAR)
        elif k.arg == "allow_pickle" and not (isinstance(k.value, ast.Constant) and k.value.value is False):
            self.found(node, "loads pickled code (allow_pickle)", Kind.FAR)

    def workers(self, node: ast.Call, value: ast.AST) -> None:
        """A DataLoader's ``num_workers`` other than a plain 0 starts processes, and work done in
        another process is out of the reach of the rules' runtime watch: not allowed."""
        if not (isinstance(value, ast.Constant) and type(value.value) is int and value.value == 0):
            shown = repr(value.value) if isinstance(value, ast.Constant) else source_text(value)
            self.found(node, f"starts worker processes (num_workers={shown[:40]}; only num_workers=0 "
                             "is allowed: a notebook's work runs in its own process)")
