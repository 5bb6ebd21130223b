"""The rules' second pass over a notebook's code: what each statement and expression does against
the rules, as findings tied to their nodes. See :mod:`course.rules`."""
from __future__ import annotations

import ast
import builtins
import functools
import types
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .rules_allowed import (
    _ATTRIBUTE_BUILTINS,
    _CHANGES,
    _CODE_FROM_STRINGS,
    _CONVENTIONAL,
    _DENIED_NAMES,
    _DUNDER_NAMES,
    _INTERNALS,
    _IPYTHON_NAMES,
    _MAGIC_METHODS,
    _MAY_SHOW_MODULES,
    _NAMEDTUPLE,
    _NAMESPACES,
    _ONLY_NAMES,
    ALLOWED_MODULES,
    DUNDER_ATTRIBUTES,
    FAR,
    RULE,
    SPECIAL_METHODS,
    _dunder,
    _import,
    _is_submodule,
    _judge,
    _kind,
    _member,
    _NotAllowed,
    _plain_string,
    _shown,
    _step,
)
from .rules_magics import _computed_magic, _plain_strings
from .rules_scopes import _Binding, _Finding, _Scope

if TYPE_CHECKING:
    from .rules import _Reading


class _Checker(ast.NodeVisitor):
    """Second pass: what the code does against the rules, as findings tied to their nodes."""

    def __init__(self, reading: _Reading, cell: int) -> None:
        self.r = reading
        self.cell = cell
        self.scope = reading.module
        self.shown: set[int] = set()            # nodes whose value may be a module (help(F), ...)
        self.anchor: ast.AST | None = None      # the node of the notebook's code a made-up node stands for
        self.plain_wraps: set[int] = set()       # functools.wraps called with the wrapped function only

    # -- helpers
    def found(self, node: ast.AST, what: str, kind: str = RULE) -> None:
        self.r.findings.append(_Finding(self.cell, self.anchor or node, what, kind))

    def inside(self, node: ast.AST, body: Iterable[ast.AST]) -> None:
        outer = self.scope
        self.scope = self.r.scopes.get(id(node), outer)
        for n in body:
            if n is not None:
                self.visit(n)
        self.scope = outer

    def lookup(self, name: str) -> tuple[_Scope | None, list[_Binding]]:
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
        module = self.r.module
        return (module, module.bound[name]) if name in module.bound else (None, [])

    def kind_of(self, node: ast.Name) -> tuple[str, list]:
        """What a name refers to where it is used: module (with [(name, module)]), object (imported
        objects), star, self (a method's own object), builtin, class (a notebook class whose
        methods trust self), or local (the notebook's own value)."""
        name = node.id
        scope, bindings = self.lookup(name)
        if not bindings:
            if name in _CONVENTIONAL and name not in self.r.anywhere:
                return "module", [(_CONVENTIONAL[name], _import(_CONVENTIONAL[name]))]
            if name in _IPYTHON_NAMES or hasattr(builtins, name):
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
        if name in _CODE_FROM_STRINGS | _NAMESPACES | _ATTRIBUTE_BUILTINS | {"breakpoint", "get_ipython"}:
            # the notebook's own function of that name counts only if defined before this use
            here = (self.cell, getattr(node, "lineno", 0))
            if scope is self.r.module and not any(b.kind in ("def", "class") and b.pos < here
                                                  for b in bindings):
                return "builtin", []
        if "class" in kinds and name in self.r.trusting_classes:
            return "class", []
        return "local", []

    # -- attribute chains
    def chain(self, node: ast.Attribute) -> tuple[ast.AST, list[str]]:
        attrs = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        return node, attrs[::-1]

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.attribute(node)

    def attribute(self, node: ast.Attribute) -> None:
        root, attrs = self.chain(node)
        as_value = isinstance(node.ctx, ast.Load) and id(node) not in self.shown
        changes = not isinstance(node.ctx, ast.Load)
        trusted = False
        if isinstance(root, ast.Name):
            kind, info = self.kind_of(root)
            if kind == "module":
                self.resolve(node, root.id, [(name, mod, True) for name, mod in info], attrs, as_value)
                if changes:
                    self.found(node, f"changes {_shown(node)} {_CHANGES}", FAR)
                return
            if kind in ("object", "star"):
                self.resolve(node, root.id, [(name, obj, False) for name, obj in info], attrs, as_value)
                if changes:
                    self.found(node, f"changes {_shown(node)} {_CHANGES}", FAR)
                return
            if kind == "self":
                trusted = True
            elif kind == "class" and attrs[0] in self.r.trusting_methods:
                self.found(node, f"takes {root.id}.{attrs[0]} off its class (a method that uses self's "
                                 "private attributes runs on its own objects only)")
            elif kind == "builtin" and root.id == "get_ipython":
                self.found(node, "uses get_ipython() other than for a magic")
            elif kind != "class":
                self.visit(root)
        elif changes and isinstance(root, ast.Call) and isinstance(root.func, ast.Name) \
                and root.func.id == "type":
            self.found(node, f"changes {_shown(node)} {_CHANGES}", FAR)
            self.visit(root)
            return
        elif isinstance(root, ast.Call) and isinstance(root.func, ast.Name) and not root.keywords \
                and root.func.id == "super" and self.kind_of(root.func)[0] == "builtin":
            # super() and super(Class, self) are bound to self; super(Class, other) may not be
            other = root.args[1] if len(root.args) > 1 else None
            bound = other is None or (isinstance(other, ast.Name) and self.kind_of(other)[0] == "self")
            trusted = bound
            if not bound and attrs[0] in self.r.trusting_methods:
                self.found(node, f"takes super(...).{attrs[0]} off its class (a method that uses self's "
                                 "private attributes runs on its own objects only)")
            for a in root.args:
                self.visit_value(a, classes_ok=True)
        else:
            if isinstance(root, ast.Call) and isinstance(root.func, ast.Name) and root.func.id == "type" \
                    and attrs[0] in self.r.trusting_methods:
                self.found(node, f"takes type(...).{attrs[0]} off its class (a method that uses self's "
                                 "private attributes runs on its own objects only)")
            self.visit(root)
        self.plain_attributes(node, root, attrs, trusted)

    def plain_attributes(self, node: ast.AST, root: ast.AST, attrs: list[str], trusted: bool) -> None:
        """Attributes of objects that are not modules: public names, self's own, few dunders."""
        for i, a in enumerate(attrs):
            nxt = attrs[i + 1] if i + 1 < len(attrs) else None
            text = ".".join([_shown(root), *attrs[:i + 1]])
            if _dunder(a):
                if a in DUNDER_ATTRIBUTES or (a == "__class__" and nxt in ("__name__", "__qualname__")) \
                        or (trusted and i == 0 and a in SPECIAL_METHODS):     # super().__repr__()
                    continue
                self.found(node, f"uses {text} (a special attribute that is not allowed)",
                           FAR if a in ("__globals__", "__builtins__", "__code__", "__closure__") else RULE)
                return
            if a in _INTERNALS:
                self.found(node, f"uses {text} (the interpreter's frames and code are not allowed)", FAR)
                return
            if a == "obj" and not (trusted and i == 0):
                self.found(node, f"uses {text} (an error's object, AttributeError.obj, is not allowed)", FAR)
                return
            if a.startswith("_") and not (trusted and i == 0) and a not in _NAMEDTUPLE:
                self.found(node, f"uses {text} (a private attribute: only a method's own self._x is allowed)")
                return

    def resolve(self, node: ast.AST, root: str, starts: list[tuple[str, object, bool]],
                attrs: list[str], as_value: bool) -> None:
        """A chain that starts at a module or an imported object, resolved against the real thing."""
        for start_name, obj, is_module in starts:
            text = root
            if is_module and obj is None and start_name in ALLOWED_MODULES:
                continue                         # allowed, but not installed here: nothing to resolve
            if is_module and obj is None:
                self.found(node, f"uses {'.'.join([root, *attrs])}: {start_name} is not allowed",
                           _kind(start_name))
                continue
            if obj is None:
                continue
            for i, a in enumerate(attrs):
                text = f"{text}.{a}"
                last = i == len(attrs) - 1
                if _dunder(a):
                    if not (last and a in DUNDER_ATTRIBUTES):
                        self.found(node, f"uses {text} (a special attribute that is not allowed)", FAR)
                    break
                if a.startswith("_"):
                    private = ", a private name" if last else f": {a} is a private name"
                    self.found(node, f"uses {'.'.join([root, *attrs])}{private} (not allowed)")
                    break
                if a in _INTERNALS:
                    self.found(node, f"uses {text} (the interpreter's frames and code are not allowed)", FAR)
                    break
                try:
                    obj = _step(obj, a)
                except _NotAllowed as exc:
                    what = text if str(exc) == text else f"{text} ({exc})"
                    self.found(node, f"uses {what}, which is not allowed", _kind(str(exc)))
                    break
                except Exception:
                    break                       # it does not resolve: a typo breaks no rule
                verdict = _judge(obj, text)
                if verdict:
                    self.found(node, f"uses {verdict[1]}", verdict[0])
                    break
                if obj is functools.wraps and id(node) not in self.plain_wraps:
                    self.found(node, f"uses {text} other than as @{text}(function) (it copies the attributes "
                                     "it is told by name)", FAR)
                    break
            else:
                if as_value and isinstance(obj, types.ModuleType):
                    self.found(node, f"uses the module {text} as a value (only as in {text}.name)")

    # -- names
    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.visit_value(node)
        elif _dunder(node.id) and node.id not in _DUNDER_NAMES \
                and not (self.scope.kind == "class" and node.id in SPECIAL_METHODS):
            self.found(node, f"uses {node.id}")

    def visit_value(self, node: ast.AST, classes_ok: bool = False) -> None:
        """A name or expression used as a value."""
        if not isinstance(node, ast.Name):
            self.visit(node)
            return
        name = node.id
        if _dunder(name):
            if name not in _DUNDER_NAMES:
                self.found(node, f"uses {name}", FAR if name in ("__builtins__", "__import__") else RULE)
            return
        kind, info = self.kind_of(node)
        if kind == "module" and id(node) not in self.shown:
            self.found(node, f"uses the module {name} as a value (only as in {name}.name)")
        elif kind in ("star", "object"):
            for shown, obj in info:
                verdict = _judge(obj, shown) if obj is not None and kind == "star" else None
                if verdict:
                    self.found(node, f"uses {verdict[1]}", verdict[0])
                if obj is functools.wraps and id(node) not in self.plain_wraps:
                    self.found(node, f"uses {name} other than as @{name}(function) (it copies the attributes "
                                     "it is told by name)", FAR)
        elif kind == "builtin":
            if name in _CODE_FROM_STRINGS:
                self.found(node, f"runs code built at run time ({name})", FAR)
            elif name in _NAMESPACES:
                self.found(node, f"reads a namespace ({name})", FAR)
            elif name == "breakpoint":
                self.found(node, "uses breakpoint")
            elif name in _ATTRIBUTE_BUILTINS:
                self.found(node, f"passes {name} around as a value (it may only be called)")
            elif name == "get_ipython":
                self.found(node, "uses get_ipython() other than for a magic")
        elif kind == "class" and not classes_ok and id(node) not in self.shown:
            self.found(node, f"passes the class {name} around (its methods use self's private attributes, "
                             "so they run on its own objects only)")
        elif kind == "local" and self.scope.kind == "class" and name in self.r.trusting_methods \
                and isinstance(self.scope.node, ast.ClassDef):
            self.found(node, f"passes the method {name} around (it uses self's private attributes, so it "
                             "runs on its own objects only)")

    # -- calls
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
            if kind == "builtin" and f.id in _ATTRIBUTE_BUILTINS and len(node.args) >= 2:
                self.attribute_builtin(node)
                return
            if kind == "builtin" and f.id == "vars" and node.args:
                # vars(x) is x.__dict__: not allowed, but it reads no namespace
                module = isinstance(node.args[0], ast.Name) and self.kind_of(node.args[0])[0] == "module"
                self.found(node, f"reads the attributes of {_shown(node.args[0])} by name (vars)",
                           FAR if module else RULE)
                for a in node.args:
                    self.visit(a)
                return
            if kind == "builtin" and f.id == "get_ipython":
                self.found(node, "uses get_ipython() other than for a magic")
                return
            if kind == "builtin" and f.id in _MAY_SHOW_MODULES:
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
            if _computed_magic(node) or f.attr not in _MAGIC_METHODS or not _plain_strings(node.args) \
                    or node.keywords:
                self.found(node, f"runs code built at run time ({f.attr})" if f.attr.startswith("run_")
                           else f"uses get_ipython().{f.attr}", FAR)
            return
        self.generic_visit(node)

    def attribute_builtin(self, node: ast.Call) -> None:
        """getattr(x, "name") is x.name; with a computed name, only on self."""
        f = node.func
        target, name = node.args[0], node.args[1]
        if _plain_string(name) and name.value.isidentifier():
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
            self.found(node, f"looks up an attribute of {_shown(target)} by a computed name "
                             f"({f.id}: only on self)", FAR if module else RULE)
            self.shown.add(id(target))              # said already: not also "a module as a value"
            self.visit(target)
            self.visit(name)
        for rest in node.args[2:]:
            self.visit(rest)
        if f.id in ("setattr", "delattr") and not _plain_string(name) and isinstance(target, ast.Name) \
                and self.kind_of(target)[0] == "module":
            self.found(node, f"changes {target.id} with {f.id} {_CHANGES}", FAR)

    def keyword_rules(self, node: ast.Call, k: ast.keyword) -> None:
        if k.arg == "num_workers" or (k.arg is None and isinstance(k.value, ast.Dict) and any(
                _plain_string(key) and key.value == "num_workers" for key in k.value.keys)):
            value = k.value if k.arg else next(v for key, v in zip(k.value.keys, k.value.values, strict=True)
                                               if _plain_string(key) and key.value == "num_workers")
            self.workers(node, value)
        elif k.arg == "weights_only" and not (isinstance(k.value, ast.Constant) and k.value.value is True):
            self.found(node, "loads pickled code (weights_only is not True)", FAR)
        elif k.arg == "pickle_module":
            self.found(node, "loads pickled code (pickle_module)", FAR)
        elif k.arg == "allow_pickle" and not (isinstance(k.value, ast.Constant) and k.value.value is False):
            self.found(node, "loads pickled code (allow_pickle)", FAR)

    def workers(self, node: ast.Call, value: ast.AST) -> None:
        """A DataLoader's ``num_workers`` other than a plain 0 starts processes, and work done in
        another process is out of the reach of the rules' runtime watch: not allowed."""
        if not (isinstance(value, ast.Constant) and type(value.value) is int and value.value == 0):
            shown = repr(value.value) if isinstance(value, ast.Constant) else _shown(value)
            self.found(node, f"starts worker processes (num_workers={shown[:40]}; only num_workers=0 "
                             "is allowed: a notebook's work runs in its own process)")

    # -- definitions and scopes
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if _dunder(node.name) and node.name not in SPECIAL_METHODS:
            self.found(node, f"defines {node.name} (of the special methods only the usual ones "
                             "(__init__, __call__, __repr__, __len__, __getitem__, ...) are allowed)")
        inner = self.r.scopes.get(id(node))
        trusting = inner is not None and inner.trusted == "self" and node.name in self.r.trusting_methods \
            and inner.owner in self.r.trusting_classes
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
        if _plain_string(node):
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

    def comprehension(self, node: ast.AST, parts: list[ast.AST]) -> None:
        self.visit(node.generators[0].iter)
        outer = self.scope
        self.scope = self.r.scopes.get(id(node), outer)
        for i, g in enumerate(node.generators):
            self.visit(g.target)
            if i:
                self.visit(g.iter)
            for c in g.ifs:
                self.visit(c)
        for p in parts:
            self.visit(p)
        self.scope = outer

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self.comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self.comprehension(node, [node.key, node.value])

    # -- imports
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            top = a.name.split(".")[0]
            for name in {a.name, *([] if a.asname else [top])}:
                if name not in ALLOWED_MODULES:
                    self.found(node, f"imports {name}, which is not allowed", _kind(name))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = node.module or ""
        if node.level:
            self.found(node, "imports from a relative module, which is not allowed")
            return
        if source not in ALLOWED_MODULES:
            self.found(node, f"imports from {source}, which is not allowed", _kind(source))
            return
        module = _import(source)
        if module is None:
            return
        for a in node.names:
            if a.name == "*":
                continue
            shown = f"{source}.{a.name}"
            if a.name.startswith("_") and a.name != "__future__":
                self.found(node, f"imports {shown}, a private name (not allowed)")
                continue
            only, denied = _ONLY_NAMES.get(source), _DENIED_NAMES.get(source, ())
            if (only is not None and a.name not in only) or a.name in denied:
                self.found(node, f"imports {shown}, which is not allowed", _kind(source))
                continue
            if shown not in ALLOWED_MODULES and _is_submodule(module, a.name):
                self.found(node, f"imports {shown}, which is not allowed", _kind(shown))
                continue
            try:
                obj = _member(module, a.name)
            except Exception:
                continue
            verdict = _judge(obj, shown)
            if verdict:
                self.found(node, f"imports {verdict[1]}", verdict[0])

    # -- strings
    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and ("/proc/" in node.value or "/dev/fd" in node.value):
            self.found(node, "reads /proc or /dev/fd (the process's own internals)", FAR)


