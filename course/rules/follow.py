"""What the graded code depends on: for each notebook-level name, the statements that may decide
what it is once the notebook has run, followed from the graded definitions to every name they use."""
from __future__ import annotations

import ast
import sys
import weakref
from collections.abc import Iterable, Iterator
from typing import cast

# try/except and try/except* (Python 3.11) have the same fields
_TRY: tuple[type[ast.Try | ast.TryStar], ...] = (ast.Try, getattr(ast, "TryStar", ast.Try))


def top_level(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements that run at notebook level, also inside if/for/while/try/with/match."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.AsyncWith, ast.AsyncFor)):
            yield from top_level(node.body + getattr(node, "orelse", []))
        elif isinstance(node, _TRY):
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
    names = [n.id for e in _own_fields(node) for n in _stored_names(e)]
    if isinstance(node, _TRY):
        names += [h.name for h in node.handlers if h.name]
    if isinstance(node, ast.Match):
        for n in (n for case in node.cases for n in ast.walk(case.pattern)):
            if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                names.append(n.name)
            elif isinstance(n, ast.MatchMapping) and n.rest:
                names.append(n.rest)
    return names


def _own_fields(stmt: ast.stmt) -> Iterable[ast.AST]:
    """A statement's own expressions (not the statements nested in its body)."""
    for _, value in ast.iter_fields(stmt):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (ast.expr, ast.withitem, ast.keyword, ast.arguments, ast.comprehension)):
                yield item


def _stored_names(node: ast.AST) -> Iterator[ast.Name]:
    """The names an expression binds in the scope it runs in: not a comprehension's variables nor
    what a lambda binds, which are their own (``sum(p.numel() for p in net.parameters())`` binds no
    ``p`` of the notebook's); a walrus in a comprehension binds around it."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            yield n
        elif isinstance(n, ast.Lambda):
            continue
        elif isinstance(n, ast.comprehension):
            stack += [n.iter, *n.ifs]
        else:
            stack += list(ast.iter_child_nodes(n))


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


# built-ins that store nothing into what they are handed (their result is new, or plain data)
_KEEPS_NOTHING = frozenset({
    "print", "len", "isinstance", "issubclass", "type", "id", "hash", "repr", "str", "int", "float",
    "bool", "complex", "abs", "round", "min", "max", "sum", "any", "all", "range", "sorted", "reversed",
    "enumerate", "zip", "list", "tuple", "dict", "set", "frozenset", "format", "divmod", "pow", "ord",
    "chr", "callable", "help", "dir"})


# functions of a module that store into what they are handed
_STORERS = frozenset({"setitem", "iadd", "iconcat", "ior", "iand", "update", "setdefault", "append",
                      "extend", "insert", "add"})
_BUILTIN_TYPES = frozenset({"dict", "list", "set", "object", "type", "collections", "OrderedDict",
                            "defaultdict", "deque", "ChainMap", "Counter", "SimpleNamespace"})


def _held(node: ast.AST | None) -> set[str]:
    """The names whose objects an expression hands over as they are, or a part of them (``t``,
    ``t.x``, ``t[0]``, ``[t, u]``, ``{"k": t}``, ``*t``, ``t.get(k)``): what a call handed it may
    store into, and what an assignment's target may share."""
    if node is None:
        return set()
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(node, ast.Call):
                if not isinstance(node.func, ast.Attribute):
                    return set()        # a new object (``GPT(cfg).eval()``), no one's to share
                node = node.func.value
            else:
                node = node.value
        return {node.id} if isinstance(node, ast.Name) else set()
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return set().union(*(_held(e) for e in node.elts))
    if isinstance(node, ast.Dict):
        return set().union(*(_held(v) for v in node.values))
    if isinstance(node, (ast.Starred, ast.NamedExpr)):
        return _held(node.value)
    if isinstance(node, ast.IfExp):
        return _held(node.body) | _held(node.orelse)
    if isinstance(node, ast.BoolOp):
        return set().union(*(_held(v) for v in node.values))
    return set()


def _handed(call: ast.Call) -> set[str]:
    """The names whose objects a call is handed (its arguments, as :func:`_held` reads them)."""
    return set().union(*(_held(a) for a in [*call.args, *(k.value for k in call.keywords)]))


def changers(trees: Iterable[ast.Module]) -> frozenset[str]:
    """The notebook's functions, classes and methods (by name) that may change an object handed to
    them: a parameter (not ``self``) that their body changes in place (``def keep(table, **named):
    table.update(named)``). A call of one changes what it is handed, as a method changes its object."""
    found = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
                if any(_changes_a_parameter(m, skip_first=True) for m in methods):
                    found.add(node.name)
                found |= {m.name for m in methods if _changes_a_parameter(m, skip_first=True)
                          and not m.name.startswith("__")}
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _changes_a_parameter(node):
                found.add(node.name)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) \
                    and _changes_a_parameter(node.value):
                found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return frozenset(found)


def _changes_a_parameter(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                         skip_first: bool = False) -> bool:
    a = fn.args
    params = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x]
    params = params[1:] if skip_first and (a.posonlyargs or a.args) else params
    body = fn.body if isinstance(fn.body, list) else [fn.body]      # a lambda's is an expression
    changed = set().union(*(_stored(b) for b in body)) if body else set()
    return bool(changed & set(params))


def _stored(node: ast.AST) -> set[str]:
    """The names a statement surely stores into: ``t.x = ...``, ``t[k] = ...``, ``del t.x``,
    ``setattr(t, ...)``, a method called on them in a statement of its own (``t.update(named)``) and
    what :func:`_handed_over` says (not a method called inside an expression, ``attn.qkv(x)``)."""
    statements = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Expr)}
    names = _stored_in_place(node, statements)
    return cast("set[str]", (names | _handed_over(node, frozenset(), frozenset(), frozenset(),
                                                  any_function=False)) - {None})


def _stored_in_place(node: ast.AST, statements: set[int]) -> set[str | None]:
    """``t.x = ...``, ``t[k] = ...``, ``del t.x``, ``setattr(t, ...)``, ``t += ...`` and ``t.m(...)`` as
    a statement of its own (``statements``: the ids of the statements' calls)."""
    names: set[str | None] = set()
    # a name local to the function the store is in is the function's own, not the notebook's
    # (``for block in faster.blocks: block.attn.__class__ = ...`` changes no notebook-level ``block``)
    for n, local, _ in _scoped_walk(node):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and not isinstance(n.ctx, ast.Load):
            root = _root_name(n.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.args \
                and n.func.id in ("setattr", "delattr"):
            root = _root_name(n.args[0])
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and id(n) in statements:
            root = _root_name(n.func.value)
        else:
            continue
        if root not in local:
            names.add(root)
    # ``stack += [piece]`` grows the list ``stack`` names in place (a second name for the list the
    # graded code reads stores the piece there); in a function it defines, such a name is its own
    names |= {n.target.id for n, local, _ in _scoped_walk(node)
              if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id not in local}
    return names


def _touched(node: ast.AST, modules: frozenset[str] = frozenset(),
             changing: frozenset[str] = frozenset(), own: frozenset[str] = frozenset()) -> set[str]:
    """The names whose objects a statement (or a function it defines) may change in place:
    ``h.x = ...``, ``h[k] = ...``, ``del h.x``, ``setattr(h, ...)``, ``h += ...``, and a method called on
    them anywhere, in a statement of its own or inside an expression (``h.append(...)``,
    ``_ = h.update(f=...)``, ``[h.setdefault(k, v)]``): any method may change its object (inside
    an expression, when it is handed anything but constants: ``q.transpose(-2, -1)`` can put no
    object into ``q``). So may a call change what it is handed (:func:`_handed_over`): ``keep(h,
    f=F.layer_norm)``, ``dict.update(h, ...)``. ``modules``: names bound to modules only (``y =
    F.softmax(x)`` changes no object of the notebook's; a change to a module is a finding of its own);
    ``changing``: the notebook's functions and methods that change a parameter (:func:`changers`),
    ``own``: the names it defines with def or class (whose calls store only as ``changing`` says)."""
    statements = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Expr)}
    names = _stored_in_place(node, statements)
    names |= _changed_by_methods(node, modules, statements)
    names |= _handed_over(node, modules, changing, own)
    names.discard(None)
    return cast("set[str]", names)


def _handed_over(node: ast.AST, modules: frozenset[str], changing: frozenset[str],
                 own: frozenset[str], any_function: bool = True) -> set[str]:
    """The names handed to a call that may store into them: one of the notebook's ``changing``
    functions or methods (handed anything); a function that is not the notebook's own (a name bound
    to ``dict.update``, ``operator.setitem``) or a method taken off a built-in type (``dict.update``),
    handed two or more objects (one may go into another: ``dict.update(table, norm=F.layer_norm)``);
    a module's function that stores (``operator.setitem``). Not the built-ins that keep nothing, nor
    the names local to the function the call is in; not a plain function, unless ``any_function``."""
    names: set[str] = set()
    for n, local, _ in _scoped_walk(node):
        if not isinstance(n, ast.Call) or not isinstance(n.func, (ast.Name, ast.Attribute)):
            continue
        callee = n.func.id if isinstance(n.func, ast.Name) else n.func.attr
        root = _root_name(n.func)
        objects = [a for a in [*n.args, *(k.value for k in n.keywords)] if not isinstance(a, ast.Constant)]
        if callee in changing:      # a method of the notebook's, called on an object of the notebook's
            stores = isinstance(n.func, ast.Name) or root not in local
        elif root in modules:
            stores = callee in _STORERS
        elif isinstance(n.func, ast.Name):
            stores = any_function and callee not in _KEEPS_NOTHING and callee not in own and len(objects) >= 2
        else:
            stores = root in _BUILTIN_TYPES and len(objects) >= 2
        if stores:
            names |= _handed(n) - local - modules
    return names


def _changed_by_methods(node: ast.AST, modules: frozenset[str], statements: set[int]) -> set[str | None]:
    """The names a method is called on inside an expression, handed anything but constants; not
    those local to the function the call is in (its parameters and what it assigns: ``t.view(B,
    T)`` in ``def by_head(t)`` changes no notebook-level ``t``), nor modules."""
    names: set[str | None] = set()
    for n, local, _ in _scoped_walk(node):
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
    stored = {x.id for b in body for x in _stored_names(b)}
    return frozenset((outer | params | stored) - declared)


# statement -> its scoped walk: every question's rules follow the same statements of one reading
_WALKS: weakref.WeakKeyDictionary[ast.AST, list[tuple[ast.AST, frozenset[str], bool]]] = \
    weakref.WeakKeyDictionary()


def _scoped_walk(node: ast.AST) -> list[tuple[ast.AST, frozenset[str], bool]]:
    """Every node under ``node`` (a parent before its children), with the names that are local to
    the functions and comprehensions around it (there, a name is not the notebook's), and whether
    it runs later than the statement (in a function's or a lambda's body, or a generator's, which
    run when called or consumed). Worked out once per statement."""
    walk = _WALKS.get(node)
    if walk is None:
        walk = _WALKS[node] = list(_walk_scoped(node))
    return walk


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _walk_scoped(node: ast.AST) -> Iterator[tuple[ast.AST, frozenset[str], bool]]:
    stack: list[tuple[ast.AST, frozenset[str], bool]] = [(node, frozenset(), False)]
    while stack:
        n, local, later = stack.pop()
        yield n, local, later
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = n.args
            inner = _function_locals(n, local)
            outer = [*a.defaults, *(d for d in a.kw_defaults if d is not None),
                     *getattr(n, "decorator_list", [])]
            body = n.body if isinstance(n.body, list) else [n.body]
            stack += [(x, local, later) for x in outer] + [(b, inner, True) for b in body]
            continue
        if isinstance(n, _COMPREHENSIONS):
            # the first iterable runs where the comprehension is; the rest in its own scope, where
            # its variables are its own, and a generator's only once it is consumed
            first, *rest = n.generators
            inner = local | {x.id for g in n.generators for x in ast.walk(g.target)
                             if isinstance(x, ast.Name)}
            body_later = later or isinstance(n, ast.GeneratorExp)
            parts = [first.target, *first.ifs, *(x for g in rest for x in (g.target, g.iter, *g.ifs)),
                     *([n.key, n.value] if isinstance(n, ast.DictComp) else [n.elt])]
            stack += [(first.iter, local, later)] + [(x, inner, body_later) for x in parts]
            continue
        stack += [(c, local, later) for c in ast.iter_child_nodes(n)]


def last_binding(nodes: list[ast.stmt], name: str) -> ast.stmt:
    """The last of a name's live statements that binds it (not one that changes it in place)."""
    bound = [s for s in nodes if name in bound_names(s)]
    return bound[-1] if bound else nodes[-1]


def _carries(call: ast.Call) -> bool:
    """Whether a call is handed anything but constants (an object it could store)."""
    return any(isinstance(n, ast.Name) for a in [*call.args, *(k.value for k in call.keywords)]
               for n in ast.walk(a))


# a position after every statement of the notebook: what is read once the notebook has run
END = sys.maxsize


class Live(dict[str, list[ast.stmt]]):
    """For each notebook-level name, the statements that may decide what it is once the notebook has
    run (the dict's values), and what it takes to tell what it may be at an earlier point:
    ``position``, each statement's place in the notebook (a statement inside an if/for/... has the
    place of the statement at the cell's top level it is in); ``history``, every statement that binds
    a name, in order (place, statement, whether it replaces what came before: a binding at a cell's
    top level); ``always``, what may change a name's object in place or rebind it from a function
    (it may run at any time)."""

    def __init__(self) -> None:
        super().__init__()
        self.position: dict[int, int] = {}
        self.history: dict[str, list[tuple[int, ast.stmt, bool]]] = {}
        self.always: dict[str, list[ast.stmt]] = {}

    def between(self, name: str, start: int, end: int) -> list[ast.stmt]:
        """The statements that may decide what ``name`` is when it is read at some place from
        ``start`` to ``end``: the last binding at a cell's top level before ``start``, every binding
        after it up to ``end`` (one in the same if/for/... as the read too: a loop may come back to
        it), and what is ``always`` followed. A read before any binding (which would fail) is read
        as at the end."""
        history = self.history.get(name)
        if not history or start >= END:
            return list(self.get(name, ()))
        since = max((at for at, _, replaces in history if replaces and at < start), default=-1)
        found = [s for at, s, _ in history if since <= at <= end]
        if not found:
            return list(self.get(name, ()))
        ids = {id(s) for s in found}
        return found + [s for s in self.always.get(name, ()) if id(s) not in ids]


def live(trees: Iterable[ast.Module], modules: frozenset[str] = frozenset()) -> Live:
    """For each notebook-level name, the statements that may decide what it is once the notebook
    has run: the last binding at a cell's top level and every later one inside an if/for/try/...
    (which may or may not run); every function or class that declares it ``global`` (it may be
    called at any time); every statement that may change its object in place (:func:`_touched`,
    ``modules``: the names bound to modules only). With what it takes to tell the same at an
    earlier point (:class:`Live`)."""
    trees = list(trees)
    changing = changers(trees)
    own = frozenset(n.name for t in trees for n in top_level(t.body)
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    found = Live()
    later: dict[str, list[ast.stmt]] = {}
    shares: dict[str, set[str]] = {}            # name -> the names whose objects it may share
    place = 0
    for tree in trees:
        direct = {id(s) for s in tree.body}
        for node in top_level(tree.body):
            if id(node) in direct:
                place += 1
            found.position[id(node)] = place
            _record_bindings(found, node, place, id(node) in direct)
            for name in _changed_from_afar(node, id(node) in direct, modules, changing, own):
                later.setdefault(name, []).append(node)
            _record_shares(shares, node, modules)
    _spread_through_shares(later, shares)
    for name, nodes in later.items():
        if name in found:
            found[name].extend(nodes)
            found.always[name] = nodes
    return found


def _record_bindings(found: Live, node: ast.stmt, place: int, direct: bool) -> None:
    """The names ``node`` binds, in ``found``'s history; a binding at a cell's top level (``direct``)
    replaces what came before (an augmented assignment never does: it changes it)."""
    for name in bound_names(node):
        replaces = direct and not isinstance(node, ast.AugAssign)
        found.history.setdefault(name, []).append((place, node, replaces))
        if replaces:
            found[name] = [node]
        else:
            found.setdefault(name, []).append(node)


def _changed_from_afar(node: ast.stmt, direct: bool, modules: frozenset[str], changing: frozenset[str],
                       own: frozenset[str]) -> list[str]:
    """The names whose object ``node`` may change whenever it runs (in order, a name once for each
    time): those a function or class declares ``global``, and those it changes in place
    (:func:`_touched`; an if/for/while/with/try inside a cell's top level is read statement by
    statement, as :func:`top_level` gives them)."""
    names: list[str] = []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for n in ast.walk(node):
            if isinstance(n, ast.Global):
                names.extend(n.names)
    if direct or not isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
        names.extend(_touched(node, modules, changing, own))
    return names


def _record_shares(shares: dict[str, set[str]], node: ast.stmt, modules: frozenset[str]) -> None:
    """For an assignment, the names its targets may now share objects with (``notes = borrowed``)."""
    for target, value in _assigned(node):
        names = _held(target) if isinstance(target, (ast.Tuple, ast.List)) else {_root_name(target)}
        for name in cast("set[str]", names - {None}):
            shares.setdefault(name, set()).update(_held(value) - modules - {name})


def _spread_through_shares(later: dict[str, list[ast.stmt]], shares: dict[str, set[str]]) -> None:
    """A change through another name for the same object changes this name's too."""
    for name in list(later):
        for other in _sharing(name, shares):
            later.setdefault(other, []).extend(n for n in later[name] if n not in later.get(other, []))


def _assigned(node: ast.stmt) -> list[tuple[ast.AST, ast.AST | None]]:
    """(target, value) of an assignment at notebook level (``notes = borrowed``); none otherwise."""
    if isinstance(node, ast.Assign):
        return [(t, node.value) for t in node.targets]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return [(node.target, node.value)]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [(node.target, node.iter)]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [(i.optional_vars, i.context_expr) for i in node.items if i.optional_vars is not None]
    return []


def _sharing(name: str, shares: dict[str, set[str]]) -> set[str]:
    """Every name whose object ``name`` may share, through assignments in turn."""
    seen, todo = set(), [name]
    while todo:
        for other in shares.get(todo.pop(), ()):
            if other not in seen and other != name:
                seen.add(other)
                todo.append(other)
    return seen


def followed(statements: dict[str, list[ast.stmt]], roots: Iterable[str],
             scoped: bool = False) -> Iterator[ast.AST]:
    """Every node of the statements behind ``roots`` (``statements``: :func:`live`), and of those
    behind every notebook-level name they use, in turn; each node once. ``scoped``: a name local to
    a function there (a parameter ``k``, a loop variable) is not followed to the notebook's ``k``
    (without it, every name of the notebook's is, as the page's rules read the graded code).

    A name is followed to what it may be where it is read (:meth:`Live.between`): the roots once the
    notebook has run; a name a statement reads as it runs (``gpt_params = V * D + ...``), to what it
    is at that statement, not to a later cell's ``D`` or ``block``, which another question uses; a
    name read in a function's body (or a lambda's, a generator's), to anything it may be from the
    time the function was reached on (it may be called then, or any time after)."""
    between = getattr(statements, "between", None)
    position = getattr(statements, "position", {})
    yielded: set[int] = set()
    started: dict[int, int] = {}        # statement -> the earliest place it was followed from
    todo = [(node, END) for r in roots for node in statements.get(r, ())]
    while todo:
        node, start = todo.pop()
        if started.get(id(node), END + 1) <= start:
            continue
        started[id(node)] = start
        here = position.get(id(node), END)
        scoped_walk = _scoped_walk(node)
        if scoped:
            walk: Iterable[tuple[ast.AST, frozenset[str], bool]] = scoped_walk
        else:                           # every node, annotations too, none of them local
            runs_later = {id(n): later for n, _, later in scoped_walk}
            walk = ((n, frozenset(), runs_later.get(id(n), True)) for n in ast.walk(node))
        for n, local, later in walk:
            if id(n) not in yielded:
                yielded.add(id(n))
                yield n
            if isinstance(n, ast.Name) and n.id in statements and n.id not in local:
                if between is None:
                    reached, since = statements[n.id], start
                elif later:
                    since = max(start, here)
                    reached = between(n.id, since, END)
                else:
                    since = here
                    reached = between(n.id, here, here)
                todo += [(s, since) for s in reached if started.get(id(s), END + 1) > since]
