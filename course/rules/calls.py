"""The rules on calls: ``getattr`` and friends, ``vars``, ``get_ipython()`` and its magics, the
keywords that load pickled code or start worker processes."""
from __future__ import annotations

import ast
from typing import cast

from .allowed import ATTRIBUTE_BUILTINS, MAGIC_METHODS, MAY_SHOW_MODULES
from .chains import Chains
from .findings import Kind
from .magics import computed_magic
from .resolve import CHANGES, judge, origin, step, within
from .syntax import plain_string, plain_strings, source_text

# methods of torch's layers that give their own object back
SAME_OBJECT = frozenset({"to", "eval", "train", "cpu", "cuda", "float", "double", "half", "requires_grad_"})


class Calls(Chains):
    def visit_Call(self, node: ast.Call) -> None:
        # what this method calls and visits stays here and not in helpers of its own: a helper puts
        # one more frame on the stack under what it calls, and the code nested too deep to read (a
        # RecursionError, course.rules.reading) would change
        f = node.func
        self.keyword_rules(node)
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
                self.shown.update(id(a) for a in node.args)
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
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call) \
                and isinstance(f.value.func, ast.Name) and f.value.func.id == "get_ipython" \
                and self.kind_of(f.value.func)[0] == "builtin":
            if computed_magic(node) or f.attr not in MAGIC_METHODS or not plain_strings(node.args) \
                    or node.keywords:
                self.found(node, f"runs code built at run time ({f.attr})" if f.attr.startswith("run_")
                           else f"uses get_ipython().{f.attr}", Kind.FAR)
            return
        self.generic_visit(node)

    def attribute_builtin(self, node: ast.Call) -> None:
        """getattr(x, "name") is x.name; with a computed name, only on self, and getattr and hasattr
        on an object of the notebook's own (:meth:`own_object`)."""
        f = node.func
        assert isinstance(f, ast.Name)              # the caller's: a call of a built-in by name
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
        elif isinstance(target, ast.Name) and f.id in ("getattr", "hasattr") and self.own_object(target):
            self.visit(target)
            self.visit(name)
        else:
            module = isinstance(target, ast.Name) and self.kind_of(target)[0] == "module"
            self.found(node, f"looks up an attribute of {source_text(target)} by a computed name "
                             f"({f.id}: only on self, or to read one of an object of a class of the "
                             "notebook's own)", Kind.FAR if module else Kind.RULE, hides=True)
            self.shown.add(id(target))              # said already: not also "a module as a value"
            self.visit(target)
            self.visit(name)
        for rest in node.args[2:]:
            self.visit(rest)
        if f.id in ("setattr", "delattr") and not plain_string(name) and isinstance(target, ast.Name) \
                and self.kind_of(target)[0] == "module":
            self.found(node, f"changes {target.id} with {f.id} {CHANGES}", Kind.FAR)

    def keyword_rules(self, node: ast.Call) -> None:
        """What a call's keywords say by themselves (worker processes, pickled code), and a call
        with one plain argument (``functools.wraps(f)``: it copies the usual attributes only)."""
        for k in node.keywords:
            if k.arg == "num_workers" or (k.arg is None and isinstance(k.value, ast.Dict) and any(
                    plain_string(key) and key.value == "num_workers" for key in k.value.keys)):
                value = k.value if k.arg else next(v for key, v in zip(cast(ast.Dict, k.value).keys,
                                                                       cast(ast.Dict, k.value).values,
                                                                       strict=True)
                                                   if plain_string(key) and key.value == "num_workers")
                self.workers(node, value)
            elif k.arg == "weights_only" and not (isinstance(k.value, ast.Constant)
                                                  and k.value.value is True):
                self.found(node, "loads pickled code (weights_only is not True)", Kind.FAR)
            elif k.arg == "pickle_module":
                self.found(node, "loads pickled code (pickle_module)", Kind.FAR)
            elif k.arg == "allow_pickle" and not (isinstance(k.value, ast.Constant)
                                                  and k.value.value is False):
                self.found(node, "loads pickled code (allow_pickle)", Kind.FAR)
        if len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
            self.plain_wraps.add(id(node.func))

    def workers(self, node: ast.Call, value: ast.AST) -> None:
        """A DataLoader's ``num_workers`` other than a plain 0 starts processes, and work done in
        another process is out of the reach of the rules' runtime watch: not allowed."""
        if not (isinstance(value, ast.Constant) and type(value.value) is int and value.value == 0):
            shown = repr(value.value) if isinstance(value, ast.Constant) else source_text(value)
            self.found(node, f"starts worker processes (num_workers={shown[:40]}; only num_workers=0 "
                             "is allowed: a notebook's work runs in its own process)")

    # -- objects of the notebook's own
    def own_object(self, target: ast.Name) -> bool:
        """Whether a name is, wherever the notebook binds it, an object the notebook made of a class
        of its own or of one of torch's layers (``big = MyTransformer(2002)``, ``net =
        nn.Sequential(...).to(device)``): a notebook-level name bound only by plain assignments.
        What such an object holds is the notebook's code (read, and followed with the name) or
        torch's layers' (which hold no ready-made piece); one attribute looked up by a computed
        name is no way out, for what it gives is used as the rules read it (another computed
        lookup on it is not allowed)."""
        scope, bindings = self.lookup(target.id)
        return scope is self.scopes.module and bool(bindings) and all(
            b.kind == "other" and b.value is not None and self.made_here(b.value) for b in bindings)

    def made_here(self, value: ast.expr) -> bool:
        """``Class(...)`` of a class of the notebook's own or of torch's layers, perhaps followed by
        the layers' methods that give the same object back (``.to(device)``, ``.eval()``)."""
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in SAME_OBJECT and value.func.attr not in self.anywhere:
            value = value.func.value
        if not isinstance(value, ast.Call):
            return False
        return self.own_class(value.func, set()) or self.torch_layer(value.func)

    def own_class(self, node: ast.expr, seen: set[str]) -> bool:
        """A class the notebook defines in cells of its own (not the course's), undecorated, whose
        bases are such classes or torch's layers (each of its definitions, where it has several)."""
        if not isinstance(node, ast.Name) or node.id in seen:
            return False
        bindings = self.scopes.module.bound.get(node.id, [])
        if not bindings or any(b.kind != "class" or b.pos[0] in self.scopes.given_cells for b in bindings):
            return False
        for binding in bindings:
            cls = binding.node
            if not isinstance(cls, ast.ClassDef) or cls.decorator_list or cls.keywords:
                return False
            if not all(self.own_class(b, seen | {node.id}) or self.torch_layer(b) for b in cls.bases):
                return False
        return True

    def torch_layer(self, node: ast.expr) -> bool:
        """``nn.Module``, ``nn.Linear``, ...: one of torch's layers (a subclass of ``nn.Module``
        defined in ``torch.nn``) that the rules allow, reached from an import of the notebook's."""
        chain: list[str] = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        bindings = self.scopes.module.bound.get(node.id, [])
        if not bindings or any(b.kind not in ("module", "object") for b in bindings):
            return False
        starts = [(n, m) for b in bindings for n, m in (b.modules or b.objects)]
        return bool(starts) and all(self.layer(start, obj, chain[::-1]) for start, obj in starts)

    @staticmethod
    def layer(start: str, obj: object, attrs: list[str]) -> bool:
        import torch.nn as nn
        if obj is None:
            return False
        try:
            for a in attrs:
                if a.startswith("_"):
                    return False
                obj = step(obj, a)
        except Exception:
            return False
        return isinstance(obj, type) and issubclass(obj, nn.Module) and within(origin(obj), ("torch.nn",)) \
            and judge(obj, ".".join([start, *attrs])) is None
