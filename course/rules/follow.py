"""What the graded code depends on: for each notebook-level name, the statements that may decide
what it is once the notebook has run, followed from the graded definitions to every name they use."""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from .syntax import own_expressions


def top_level(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements that run at notebook level, also inside if/for/while/try/with/match."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.AsyncWith, ast.AsyncFor)):
            yield from top_level(node.body + getattr(node, "orelse", []))
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            yield from top_level(node.body + node.orelse + node.finalbody
                                 + [s for h in node.handlers for s in h.body])
        elif isinstance(node, ast.Match):
            yield from top_level([s for case in node.cases for s in case.body])


def bound_names(node: ast.stmt) -> list[str]:
    """The notebook-level names a statement binds (not those bound in the statements of its body,
    which :func:`top_level` gives one by one)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    names = [n.id for e in own_expressions(node) for n in ast.walk(e)
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
    for n, local in _scoped_walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and id(n) not in statements \
                and _carries(n):
            root = _root_name(n.func.value)
            if root not in modules and root not in local:
                names.add(root)
    return names


def _function_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                     outer: frozenset[str]) -> frozenset[str]:
    """The names local inside a function (``outer``: those local around it): its parameters and what
    its body binds, but for those it declares global or nonlocal."""
    a = fn.args
    params = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    declared = {g for x in ast.walk(fn) if isinstance(x, (ast.Global, ast.Nonlocal)) for g in x.names}
    stored = {x.id for b in body for x in ast.walk(b)
              if isinstance(x, ast.Name) and not isinstance(x.ctx, ast.Load)}
    return frozenset((outer | params | stored) - declared)


def _scoped_walk(node: ast.AST) -> Iterator[tuple[ast.AST, frozenset[str]]]:
    """Every node under ``node`` (a parent before its children), with the names that are local to
    the functions around it (there, a name is not the notebook's)."""
    stack: list[tuple[ast.AST, frozenset[str]]] = [(node, frozenset())]
    while stack:
        n, local = stack.pop()
        yield n, local
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = n.args
            inner = _function_locals(n, local)
            outer = [*a.defaults, *(d for d in a.kw_defaults if d is not None),
                     *getattr(n, "decorator_list", [])]
            body = n.body if isinstance(n.body, list) else [n.body]
            stack += [(x, local) for x in outer] + [(b, inner) for b in body]
            continue
        stack += [(c, local) for c in ast.iter_child_nodes(n)]


def last_binding(nodes: list[ast.stmt], name: str) -> ast.stmt:
    """The last of a name's live statements that binds it (not one that changes it in place)."""
    bound = [s for s in nodes if name in bound_names(s)]
    return bound[-1] if bound else nodes[-1]


def _carries(call: ast.Call) -> bool:
    """Whether a call is handed anything but constants (an object it could store)."""
    return any(isinstance(n, ast.Name) for a in [*call.args, *(k.value for k in call.keywords)]
               for n in ast.walk(a))


def live(trees: Iterable[ast.Module], modules: frozenset[str] = frozenset()) -> dict[str, list[ast.stmt]]:
    """For each notebook-level name, the statements that may decide what it is once the notebook
    has run: the last binding at a cell's top level and every later one inside an if/for/try/...
    (which may or may not run); every function or class that declares it ``global`` (it may be
    called at any time); every statement that may change its object in place (:func:`_touched`,
    ``modules``: the names bound to modules only)."""
    found: dict[str, list[ast.stmt]] = {}
    later: dict[str, list[ast.stmt]] = {}
    for tree in trees:
        direct = {id(s) for s in tree.body}
        for node in top_level(tree.body):
            for name in bound_names(node):
                if id(node) in direct and not isinstance(node, ast.AugAssign):
                    found[name] = [node]
                else:
                    found.setdefault(name, []).append(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for n in ast.walk(node):
                    if isinstance(n, ast.Global):
                        for name in n.names:
                            later.setdefault(name, []).append(node)
            if id(node) in direct or not isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                for name in _touched(node, modules):
                    later.setdefault(name, []).append(node)
    for name, nodes in later.items():
        if name in found:
            found[name].extend(nodes)
    return found


def followed(statements: dict[str, list[ast.stmt]], roots: Iterable[str],
             scoped: bool = False) -> Iterator[ast.AST]:
    """Every node of the statements behind ``roots`` (``statements``: :func:`live`), and of those
    behind every notebook-level name they use, in turn; each statement once. ``scoped``: a name
    local to a function there (a parameter ``k``, a loop variable) is not followed to the notebook's
    ``k`` (without it, every name of the notebook's is, as the page's rules read the graded code)."""
    seen: set[int] = set()
    todo = [node for r in roots for node in statements.get(r, ())]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        walk = _scoped_walk(node) if scoped else ((n, frozenset()) for n in ast.walk(node))
        for n, local in walk:
            yield n
            if isinstance(n, ast.Name) and n.id in statements and n.id not in local:
                todo += [s for s in statements[n.id] if id(s) not in seen]
