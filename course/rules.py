"""The page's rules: your own code, built from what the course allows, and no ready-made
transformer pieces in the code that is graded.

The reading is in four small modules beside this one: :mod:`course.rules_allowed` (what may be
used), :mod:`course.rules_magics` (IPython syntax as Python), :mod:`course.rules_scopes` (the first
pass: scopes and bindings) and :mod:`course.rules_checker` (the second pass: findings).

**What a notebook may use.** Rules by what is allowed, read from the notebook's code on the
grader's side (never in the submission's process):

- *Modules*: only those in :data:`ALLOWED_MODULES` may be imported or reached (torch with its
  public tensor, layer, optimiser, autograd and data modules; numpy, math, random, time, ...;
  matplotlib.pyplot, tqdm; the course's own public modules). A name bound by ``import`` may only
  start an attribute chain (``F.softmax(x)``) or appear in an import (and in ``help``/``dir``/
  ``print``): as a value (``G = F``, ``f(F)``, ``[F][0]``, ``getattr(F, name)``, ``vars(F)``) it is
  not allowed, for that is how a module is reached other than by import.
- *Chains that start at a module* (``torch.nn.functional.softmax``) are resolved here against the
  real modules, step by step: every step public (no ``_``), every module on the way allowed, and
  what is reached neither torch's machinery (``torch.overrides``, ``torch.jit``, ``torch.ops``,
  ``torch._C``'s context managers, ...) nor one of the ready-made pieces the page forbids
  (:data:`FORBIDDEN_NAMES`, compared by identity, and ``torch.nn.attention``). A chain that does
  not resolve (a typo) breaks no rule.
- *Attributes on other objects* (tensors, your modules): public names; ``self._x`` (and ``cls._x``)
  in a method; of the dunder attributes only :data:`DUNDER_ATTRIBUTES` (``super().__init__``,
  ``type(x).__name__``, ...); no interpreter internals (``gi_frame``, ``f_back``, ...).
  ``getattr``/``setattr``/``hasattr``/``delattr`` with a constant name are the attribute itself;
  with a computed name they are allowed only on ``self`` in a method (``getattr(self, f"head{i}")``),
  and such a method may then only be called on its own objects (not taken off its class with
  ``Class.method``, passed around or wrapped in a decorator of the notebook's own).
- *No code from strings, no namespaces*: ``exec``, ``eval``, ``compile``, ``globals``, ``locals``,
  ``vars``, ``breakpoint``, ``__import__``, ``__builtins__``, ``get_ipython()`` other than for a
  magic written as a plain string, special methods other than :data:`SPECIAL_METHODS`.
- *One process*: ``multiprocessing``, ``os``, ``subprocess`` are on no allow-list, and a
  ``DataLoader``'s ``num_workers`` other than a plain ``0`` is not allowed (work in a worker
  process is out of the runtime watch's reach).

Two checks, and the autograder uses both:

- :func:`static_uses` (the rules point): the definitions being graded (say ``Attention``) and every
  notebook-level name they use, followed to each definition of it that may hold once the notebook
  has run (the last one at a cell's top level, any later one inside if/for/with/try/match, any
  function that rebinds it as a global); a ready-made piece or anything not allowed there costs
  the point, and so does, anywhere in the notebook, anything that changes PyTorch or the course,
  runs code from strings or reads a namespace (it could change the graded code from afar).
- :func:`suspicious` (the status): anything not allowed in any cell of the notebook's own (cells
  identical to a cell of the blank notebook are the course's); a ready-made piece alone is fine
  there (the page's own checks use ``F.scaled_dot_product_attention`` in a cell of their own).
- :class:`Watch` records forbidden functions that actually run while your code is called. It runs
  inside your own process, so it is a second signal only: it can take points away, never give
  them.

What static reading cannot see is listed in docs/honest-grading.md: code that public library
functions run on the notebook's behalf from data (a pickle, a name in a string passed to a
library function), and what a notebook's process does to itself at run time.
"""
from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from .rules_allowed import (
    ALLOWED_MODULES,
    DUNDER_ATTRIBUTES,
    FAR,
    FORBIDDEN_NAMES,
    PIECE,
    SPECIAL_METHODS,
    _forbidden_word,
)
from .rules_checker import _Checker
from .rules_magics import _own_expressions, _strip_magics
from .rules_scopes import _Binder, _Finding, _Scope

# ---------------------------------------------------------------- reading a notebook

def _parse_cell(source: str) -> ast.Module | None:
    try:
        return ast.parse(_stripped(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _parse(cells: Iterable[str]) -> list[ast.Module]:
    return [t for t in map(_parse_cell, cells) if t is not None]


def _top_level(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements that run at notebook level, also inside if/for/while/try/with/match."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.AsyncWith, ast.AsyncFor)):
            yield from _top_level(node.body + getattr(node, "orelse", []))
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            yield from _top_level(node.body + node.orelse + node.finalbody
                                  + [s for h in node.handlers for s in h.body])
        elif isinstance(node, ast.Match):
            yield from _top_level([s for case in node.cases for s in case.body])


def _bound_names(node: ast.stmt) -> list[str]:
    """The notebook-level names a statement binds (not those bound in the statements of its body,
    which :func:`_top_level` gives one by one)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    names = [n.id for e in _own_expressions(node) for n in ast.walk(e)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        names += [h.name for h in node.handlers if h.name]
    if isinstance(node, ast.Match):
        for n in (n for case in node.cases for n in ast.walk(case.pattern)):
            if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                names.append(n.name)
            elif isinstance(n, ast.MatchMapping) and n.rest:
                names.append(n.rest)
    return names


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _touched(node: ast.AST, modules: frozenset[str] = frozenset()) -> set[str]:
    """The names whose objects a statement (or a function it defines) may change in place:
    ``h.x = ...``, ``h[k] = ...``, ``del h.x``, ``setattr(h, ...)``, and a method called on
    them anywhere, in a statement of its own or inside an expression (``h.append(...)``,
    ``_ = h.update(f=...)``, ``[h.setdefault(k, v)]``): any method may change its object (inside
    an expression, when it is handed anything but constants: ``q.transpose(-2, -1)`` can put no
    object into ``q``). ``modules``: names bound to modules only (``y = F.softmax(x)`` changes no object
    of the notebook's; a change to a module is a finding of its own)."""
    names = set()
    statements = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Expr)}
    for n in ast.walk(node):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and not isinstance(n.ctx, ast.Load):
            names.add(_root_name(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.args \
                and n.func.id in ("setattr", "delattr"):
            names.add(_root_name(n.args[0]))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and id(n) in statements:
            names.add(_root_name(n.func.value))
    names |= _changed_by_methods(node, modules, statements)
    names.discard(None)
    return names


def _changed_by_methods(node: ast.AST, modules: frozenset[str], statements: set[int]) -> set[str]:
    """The names a method is called on inside an expression, handed anything but constants; not
    those local to the function the call is in (its parameters and what it assigns: ``t.view(B,
    T)`` in ``def by_head(t)`` changes no notebook-level ``t``), nor modules."""
    names: set[str] = set()
    stack: list[tuple[ast.AST, frozenset[str]]] = [(node, frozenset())]
    while stack:
        n, local = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = n.args
            params = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}
            body = n.body if isinstance(n.body, list) else [n.body]
            declared = {g for x in ast.walk(n) if isinstance(x, (ast.Global, ast.Nonlocal)) for g in x.names}
            stored = {x.id for b in body for x in ast.walk(b)
                      if isinstance(x, ast.Name) and not isinstance(x.ctx, ast.Load)}
            inner = frozenset((local | params | stored) - declared)
            outer = [*a.defaults, *(d for d in a.kw_defaults if d is not None),
                     *getattr(n, "decorator_list", [])]
            stack += [(x, local) for x in outer] + [(b, inner) for b in body]
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and id(n) not in statements \
                and _carries(n):
            root = _root_name(n.func.value)
            if root not in modules and root not in local:
                names.add(root)
        stack += [(c, local) for c in ast.iter_child_nodes(n)]
    return names


def _last_binding(nodes: list[ast.stmt], name: str) -> ast.stmt:
    """The last of a name's live statements that binds it (not one that changes it in place)."""
    bound = [s for s in nodes if name in _bound_names(s)]
    return bound[-1] if bound else nodes[-1]


def _carries(call: ast.Call) -> bool:
    """Whether a call is handed anything but constants (an object it could store)."""
    return any(isinstance(n, ast.Name) for a in [*call.args, *(k.value for k in call.keywords)]
               for n in ast.walk(a))


def _live(trees: Iterable[ast.Module], modules: frozenset[str] = frozenset()) -> dict[str, list[ast.stmt]]:
    """For each notebook-level name, the statements that may decide what it is once the notebook
    has run: the last binding at a cell's top level and every later one inside an if/for/try/...
    (which may or may not run); every function or class that declares it ``global`` (it may be
    called at any time); every statement that may change its object in place (:func:`_touched`,
    ``modules``: the names bound to modules only)."""
    live: dict[str, list[ast.stmt]] = {}
    later: dict[str, list[ast.stmt]] = {}
    for tree in trees:
        direct = {id(s) for s in tree.body}
        for node in _top_level(tree.body):
            for name in _bound_names(node):
                if id(node) in direct and not isinstance(node, ast.AugAssign):
                    live[name] = [node]
                else:
                    live.setdefault(name, []).append(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for n in ast.walk(node):
                    if isinstance(n, ast.Global):
                        for name in n.names:
                            later.setdefault(name, []).append(node)
            if id(node) in direct or not isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                for name in _touched(node, modules):
                    later.setdefault(name, []).append(node)
    for name, nodes in later.items():
        if name in live:
            live[name].extend(nodes)
    return live


@functools.lru_cache(maxsize=256)

class _Reading:
    """One notebook's code read against the rules: its scopes, bindings and findings."""

    def __init__(self, cells: tuple[str, ...], given: frozenset[str]) -> None:
        self.cells = cells
        self.own = [c not in given for c in cells]
        self.trees: list[tuple[int, ast.Module]] = []
        for i, source in enumerate(cells):
            text = _stripped(source)
            try:
                self.trees.append((i, ast.parse(text)))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
        self.module = _Scope(None, "module", None)
        self.scopes: dict[int, _Scope] = {}
        self.findings: list[_Finding] = []
        self.trusting_methods: set[str] = set()       # methods that rely on self being their own object
        self.trusting_classes: set[str] = set()       # and the classes that have them
        binder = _Binder(self)
        for i, tree in list(self.trees):
            try:
                for stmt in tree.body:
                    binder.run(stmt, self.module, i)
            except RecursionError:
                self.findings.append(_Finding(i, tree, "has code nested too deep to read", FAR))
        self.anywhere = set(self.module.bound)
        for s in self.scopes.values():
            self.anywhere |= set(s.bound)
        for i, tree in self.trees:
            try:
                _Checker(self, i).visit(tree)
            except RecursionError:
                self.findings.append(_Finding(i, tree, "has code nested too deep to read", FAR))
        self.by_node: dict[int, list[_Finding]] = {}
        for f in self.findings:
            self.by_node.setdefault(id(f.node), []).append(f)


@functools.lru_cache(maxsize=4096)
def _stripped(source: str) -> str:
    """The cell as plain Python (:func:`_strip_magics`; plain Python as it is, which is faster)."""
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _strip_magics(source)
    return _strip_magics(source) if "_magic" in source else source


@functools.lru_cache(maxsize=8)
def _read(cells: tuple[str, ...], given: frozenset[str]) -> _Reading:
    return _Reading(cells, given)


def static_uses(cells: Iterable[str], roots: Iterable[str],
                template: Iterable[str] | None = None) -> list[str]:
    """What the definitions of ``roots`` (and every notebook-level name they use) do against the
    rules, read from the notebook's code cells (in order), plus what anywhere in the notebook
    changes the modules it uses, runs code from strings or reads a namespace. Empty when nothing
    is found. Given the blank notebook's cells as ``template``, its cells count as the course's.

    Also a problem: a root with no notebook-level definition at all (the code that answers for it
    cannot be read), and, with ``template``, a root whose definition is still the blank one
    (whatever answered for it, it was not that definition)."""
    cells = tuple(cells)
    roots = list(roots)
    given = frozenset(template or ())
    reading = _read(cells, given)
    modules = frozenset(name for name, bindings in reading.module.bound.items()
                        if bindings and all(b.kind == "module" for b in bindings))
    live = _live((tree for _, tree in reading.trees), modules)
    found: list[str] = []
    if cells:
        found += [f"no definition of {r} found in the notebook's code" for r in roots if r not in live]
    if template is not None:
        blank: dict[str, str] = {}
        for tree in _parse(template):
            for node in _top_level(tree.body):
                for name in _bound_names(node):
                    blank[name] = ast.dump(node)
        found += [f"{r} is still the blank template" for r in roots
                  if r in live and r in blank and ast.dump(_last_binding(live[r], r)) == blank[r]]
    seen: set[int] = set()
    todo = [node for r in roots for node in live.get(r, ())]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for n in ast.walk(node):
            for f in reading.by_node.get(id(n), ()):
                if reading.own[f.cell]:
                    found.append(f.what)
            if isinstance(n, ast.Name) and n.id in live:
                todo += [s for s in live[n.id] if id(s) not in seen]
    found += [f.what for f in reading.findings if f.kind == FAR and reading.own[f.cell]]
    return list(dict.fromkeys(found))


def suspicious(cells: Iterable[str], numbers: Iterable[int] | None = None,
               given: Iterable[str] | None = None) -> list[str]:
    """Everything in the notebook's own cells that the rules do not allow (a ready-made piece
    alone is allowed outside the graded code: the page's checks use one), for the instructor,
    who should read the notebook: an honest notebook has none. ``numbers``: the cells' numbers in
    the notebook (default 1, 2, ...); ``given``: the blank notebook's code cells (a cell identical
    to one of them is the course's: read for what it binds, not searched)."""
    cells = tuple(cells)
    numbers = list(numbers) if numbers is not None else list(range(1, len(cells) + 1))
    reading = _read(cells, frozenset(given or ()))
    found = [f"cell {numbers[f.cell] if f.cell < len(numbers) else f.cell + 1} {f.what}"
             for f in reading.findings if f.kind != PIECE and reading.own[f.cell]]
    return list(dict.fromkeys(found))


class Watch:
    """Records forbidden torch functions and modules used while it is on (a TorchFunctionMode)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self._mode = None

    def __enter__(self) -> Watch:
        from torch.overrides import TorchFunctionMode

        watch = self

        class _Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                name = getattr(func, "__name__", "") or ""
                word = _forbidden_word(name)
                if word:
                    watch.used.add(word)
                return func(*args, **(kwargs or {}))

        self._mode = _Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._mode is not None:
            self._mode.__exit__(*exc)
            self._mode = None


def forbidden_modules(module) -> list[str]:
    """The forbidden nn modules inside ``module`` (found by their classes)."""
    import torch.nn as nn
    bad = tuple(getattr(nn, n) for n in FORBIDDEN_NAMES if hasattr(nn, n))
    if not isinstance(module, nn.Module):
        return []
    return sorted({f"uses nn.{type(m).__name__}" for m in module.modules() if isinstance(m, bad)})




__all__ = ["static_uses", "suspicious", "Watch", "forbidden_modules", "FORBIDDEN_NAMES", "ALLOWED_MODULES",
           "DUNDER_ATTRIBUTES", "SPECIAL_METHODS"]
