"""What the reading accepts whole on the way of an exercise's graded definitions, and what it holds
for a person to read.

Following every way a name can be made to share an object (a function's return value, ``:=``, a
``match`` capture, a method that stores through ``self``, a callable kept in a container) always
misses the next one. So the graded definitions, and everything they use, may reach only what the
reading sees whole:

- names bound by ``def``, ``class``, ``import`` or ``name = lambda ...`` (their code is read);
- names bound only to plain values (numbers, strings, tuples of them, arithmetic on them, a
  built-in such as ``len`` that returns one): nothing can be put into them;
- their own parameters and local variables, ``self`` and what it holds, the modules' functions by
  their dotted names, literals.

A notebook-level name bound to anything else (a dict, a list, an object, a tensor, a function's
return value, a name bound by ``:=``, ``match``, ``for`` or ``with``) is an object other code may put
a forbidden piece into under another name; read on the way of the graded code, the question is
held (:func:`held`): its points stand as earned and its status asks a person to read it. So is an
attribute stored anywhere in the notebook's code onto an object reached other than through a
name (``make().forward = ...``, ``(c := Block).forward = ...``, ``setattr(pick(), ...)``): the
reading cannot tell which object that is, and it may be a graded class. And so is a name the
graded code reads that a star import of the notebook's own may bind (``from torch.nn.functional
import *`` after ``from statistics import fmean as layer_norm``): the reading follows the other binding.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import TypeGuard

from .exercise import Exercise
from .follow import _function_locals, _scoped_walk, bound_names, followed, top_level
from .follow import _held as _shared
from .reading import Reading, read

# built-ins whose result is a plain value, whatever they are handed
_PLAIN_CALLS = frozenset({"len", "int", "float", "str", "bool", "round", "abs", "min", "max", "sum", "pow",
                          "divmod", "ord", "chr", "hash", "repr", "format", "isinstance", "issubclass",
                          "callable"})
# modules whose functions return plain values (``math.sqrt(D)``)
_PLAIN_MODULES = frozenset({"math"})
_CODE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _plain(node: ast.AST | None, plain_name: Callable[[str], bool]) -> bool:
    """Whether an expression's value is plain: immutable, able to hold no object of the notebook's."""
    if node is None or isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return plain_name(node.id)
    if isinstance(node, ast.Tuple):
        return all(_plain(e, plain_name) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _plain(node.operand, plain_name)
    if isinstance(node, ast.BinOp):
        return _plain(node.left, plain_name) and _plain(node.right, plain_name)
    if isinstance(node, (ast.BoolOp,)):
        return all(_plain(v, plain_name) for v in node.values)
    if isinstance(node, (ast.Compare, ast.JoinedStr)):
        return True                     # a bool, a str
    if isinstance(node, ast.IfExp):
        return _plain(node.body, plain_name) and _plain(node.orelse, plain_name)
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name):
            return f.id in _PLAIN_CALLS
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            return f.value.id in _PLAIN_MODULES
    return False


class _Kinds:
    """What each notebook-level name is bound to: code, a plain value, or an object."""

    def __init__(self, statements: dict[str, list[ast.stmt]], given: frozenset[int] = frozenset()) -> None:
        self.statements = statements
        self.given = given              # the ids of the statements of the course's cells
        self.kinds: dict[str, str] = {}

    def bindings(self, name: str) -> list[ast.stmt]:
        return [s for s in self.statements.get(name, ()) if name in bound_names(s)]

    def function(self, name: str) -> bool:
        """Whether a name of code is bound to a function (whose attributes are no code of its own)."""
        return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in self.bindings(name))

    def kind(self, name: str) -> str:
        if name in self.kinds:
            return self.kinds[name]
        self.kinds[name] = "object"                 # a name bound in terms of itself is not plain
        bindings = self.bindings(name)
        if not bindings:
            kind = "object"
        elif all(id(s) in self.given for s in bindings):
            # the course's own data (09's ``page``, a GIVEN table): its code is read by the same rules,
            # and a change to it through an unnamed object or a local alias is held below
            kind = "given"
        elif all(isinstance(s, _CODE) or (isinstance(s, ast.Assign) and isinstance(s.value, ast.Lambda))
                 for s in bindings):
            kind = "code"
        elif all(_plain_binding(s, name, lambda n: self.kind(n) == "plain") for s in bindings):
            kind = "plain"
        else:
            kind = "object"
        self.kinds[name] = kind
        return kind


def _plain_binding(s: ast.stmt, name: str, plain_name: Callable[[str], bool]) -> bool:
    if isinstance(s, ast.Assign):
        # ``D, V, C = 128, 1024, 128``: names only, each bound to a part of a plain value
        return all(isinstance(t, ast.Name) or (isinstance(t, (ast.Tuple, ast.List))
                                               and all(isinstance(e, ast.Name) for e in t.elts))
                   for t in s.targets) and _plain(s.value, plain_name)
    if isinstance(s, ast.AnnAssign):
        return isinstance(s.target, ast.Name) and s.value is not None and _plain(s.value, plain_name)
    if isinstance(s, ast.AugAssign):
        return plain_name(name) and _plain(s.value, plain_name)
    if isinstance(s, (ast.For, ast.AsyncFor)) and isinstance(s.target, ast.Name):
        # ``for heads in (1, 4):``, ``for i in range(3):``: each value plain
        it = s.iter
        if isinstance(it, (ast.Tuple, ast.List, ast.Set)):
            return all(_plain(e, plain_name) for e in it.elts)
        return isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
            and all(_plain(a, plain_name) for a in it.args)
    return False


def _names(node: ast.stmt) -> str:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", node)]
    return ", ".join(ast.unparse(t) for t in targets)[:60]


def _object_value(node: ast.stmt, kinds: _Kinds) -> bool:
    """Whether an assignment (in a class's body, or onto a class or function) binds an attribute to
    an object (``table = {}``, ``Shelf.items = []``): shared by every instance and reachable from
    outside under another name. A plain value, a lambda or a name of code (``forward =
    Own.forward``) is read whole; a method is code."""
    if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
        return False
    value = node.value
    if _plain(value, lambda n: kinds.kind(n) == "plain") or isinstance(value, ast.Lambda):
        return False
    while isinstance(value, ast.Attribute):
        value = value.value
    return not (isinstance(value, ast.Name) and kinds.kind(value.id) == "code")


def _stores_through_local_aliases(fn: ast.FunctionDef | ast.AsyncFunctionDef,
                                  outer: frozenset[str]) -> list[ast.AST]:
    """The attribute stores in a function's own body (not in functions it defines, read on their
    own) into a local name that shares a notebook-level object (``c = Block``, ``for c in [Block]``,
    ``(c := Block)``): ``c.forward = ...`` changes ``Block`` under a name the follow does not link."""
    inner = _function_locals(fn, outer)
    aliases: set[str] = set()
    own = [x for b in fn.body for x in _own_nodes(b)]
    for x in own:
        pairs: list[tuple[ast.AST, ast.AST]] = []
        if isinstance(x, ast.Assign):
            pairs = [(t, x.value) for t in x.targets]
        elif isinstance(x, (ast.For, ast.AsyncFor)):
            pairs = [(x.target, x.iter)]
        elif isinstance(x, ast.NamedExpr):
            pairs = [(x.target, x.value)]
        elif isinstance(x, (ast.With, ast.AsyncWith)):
            pairs = [(i.optional_vars, i.context_expr) for i in x.items if i.optional_vars is not None]
        for target, value in pairs:
            # a name (not ``self.x``) given an object of the notebook's as it is; a call's result is
            # taken as a new object (``net = Net()``, ``layer = nn.Linear(...)``)
            names = [target] if isinstance(target, ast.Name) else list(getattr(target, "elts", []))
            if not isinstance(value, ast.Call) and _shared(value) - inner:
                aliases |= {t.id for t in names if isinstance(t, ast.Name)}
    found = []
    for x in own:
        stored = x.value if isinstance(x, ast.Attribute) and not isinstance(x.ctx, ast.Load) else (
            x.args[0] if isinstance(x, ast.Call) and isinstance(x.func, ast.Name)
            and x.func.id in ("setattr", "delattr") and x.args else None)
        while isinstance(stored, (ast.Attribute, ast.Subscript)):
            stored = stored.value
        if isinstance(stored, ast.Name) and stored.id in aliases:
            found.append(x)
    return found


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of a statement, not those of the functions, lambdas and classes it defines."""
    out, stack = [], [node]
    while stack:
        x = stack.pop()
        out.append(x)
        if not isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack += list(ast.iter_child_nodes(x))
    return out


def _unnamed_store(node: ast.AST) -> ast.AST | None:
    """The object an attribute store writes into when it is not reached through a name (``make().x =
    ...``, ``(c := K).x = ...``, ``setattr(pick(), ...)``); None for any other node."""
    target = None
    if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
        target = node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("setattr", "delattr") and node.args:
        target = node.args[0]
    if target is None:
        return None
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
    return None if isinstance(target, ast.Name) else target


def held(cells: Iterable[str], exercise: Exercise, template: Iterable[str] | None = None) -> list[str]:
    """Why what ``exercise``'s definitions use cannot be read whole (each with its line): an empty
    list when it can. The question is then held for a person, never silently accepted or zeroed."""
    reading = read(tuple(cells), frozenset(template or ()))
    return _held(reading, exercise)


def _held(reading: Reading, exercise: Exercise) -> list[str]:
    statements = reading.statements
    given = frozenset(id(s) for cell, tree in reading.trees if not reading.own[cell]
                      for s in ast.walk(tree) if isinstance(s, ast.stmt))
    kinds = _Kinds(statements, given)
    path = {id(n) for n in followed(statements, exercise.names, scoped=True)}
    stars = _star_names(reading)
    graded = set(exercise.names)     # a statement that binds a graded name: all it reads goes into it
    found: list[str] = []
    for cell, tree in reading.trees:
        for stmt in tree.body:
            code: set[int] | None = None          # _in_code(stmt), worked out once when first asked
            for n, local, _ in _scoped_walk(stmt):
                if id(n) in path and isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) \
                        and n.id not in local and n.id in stars \
                        and any(b.kind != "star" for b in reading.scopes.module.bound.get(n.id, [])):
                    found.append(f"reads `{n.id}`, which `{stars[n.id]}` may bind instead of what the "
                                 "reading follows" + _line(reading, n))
                unnamed = _unnamed_store(n)
                if unnamed is not None and (reading.own[cell] or id(n) in path):
                    found.append(f"stores into an object it reaches through `{ast.unparse(unnamed)[:60]}`, "
                                 "which the grader cannot tell apart from the graded code"
                                 + _line(reading, n))
                if id(n) in path and isinstance(n, ast.Name) and code is None:
                    code = _in_code(stmt)
                if id(n) in path and not (isinstance(n, ast.Name) and id(n) not in (code or set())
                                          and not graded & set(_bound(stmt))
                                          and id(n) not in _carried(stmt, kinds)):
                    found += _on_the_way(n, stmt, local, kinds, reading)
                if reading.own[cell] and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found += [f"stores into `{ast.unparse(x)[:60]}` under a local name for a notebook-level "
                              "object, which the grader cannot tell apart from the graded code"
                              + _line(reading, x) for x in _stores_through_local_aliases(n, local)]
    return list(dict.fromkeys(found))


def _star_names(reading: Reading) -> dict[str, str]:
    """{name: the import} of every name a ``from M import *`` of the notebook's own cells may bind:
    the names M exports, for a module the rules allow (any other is not allowed anyway). A name
    the notebook also binds otherwise (``def``, ``import ... as``) may be the star import's once it
    has run, and the follow does not see which; a name only the star import binds is read as it."""
    import importlib

    from .allowed import ALLOWED_MODULES

    found: dict[str, str] = {}
    for cell, tree in reading.trees:
        if not reading.own[cell]:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                    and any(a.name == "*" for a in node.names)):
                continue
            if node.module not in ALLOWED_MODULES:
                continue
            try:
                module = importlib.import_module(node.module)
            except Exception:
                continue
            exported = getattr(module, "__all__", None)
            names = exported if isinstance(exported, (list, tuple)) else \
                [n for n in vars(module) if not n.startswith("_")]
            for name in names:
                found.setdefault(str(name), f"from {node.module} import *")
    return found


def _line(reading: Reading, node: ast.AST) -> str:
    return f" (in the line `{reading.line(node)[:100]}`)"


def _on_the_way(n: ast.AST, stmt: ast.stmt, local: frozenset[str], kinds: _Kinds,
                reading: Reading) -> list[str]:
    """What one node on the way of the graded code does that the reading cannot take whole."""
    def code(x: ast.AST) -> TypeGuard[ast.Name]:
        return isinstance(x, ast.Name) and x.id not in local and kinds.kind(x.id) == "code"

    if isinstance(n, ast.ClassDef):
        return [f"keeps an object in the class attribute `{_names(a)}` of {n.name}, which other code may "
                "change under another name" + _line(reading, a) for a in n.body if _object_value(a, kinds)] \
            + _class_stores(n, reading)
    if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and code(t.value) for t in n.targets) \
            and _object_value(n, kinds):
        return [f"puts an object onto `{_names(n)}`, which other code may change under another name"
                + _line(reading, n)]
    if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and code(n.value) \
            and kinds.function(n.value.id):
        return [f"reads `{ast.unparse(n)[:60]}`, an attribute of a function, which other code may set under "
                "another name" + _line(reading, n)]
    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local \
            and n.id in kinds.statements and kinds.kind(n.id) == "object" \
            and not _within_plain_binding(n, stmt, kinds):
        return [f"uses `{n.id}`, a notebook-level object other code may change under another name"
                + _line(reading, n)]
    return []


def _carried(stmt: ast.stmt, kinds: _Kinds) -> set[int]:
    """The names a top-level statement reads where what they hold may pass into code: as an argument
    of a call of the notebook's code (a class or function, or a method reached from one), or as the
    value stored onto an attribute or an item of code or of the course's data. Read anywhere else
    as the statement runs (``la, lb = model(a), model(b)`` measuring a network), an object goes
    nowhere the graded code reads, and holds nothing. Inside code (:func:`_in_code`) every read
    counts."""
    def code_call(call: ast.Call) -> bool:
        root = call.func
        while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
            root = root.func if isinstance(root, ast.Call) else root.value
        return isinstance(root, ast.Name) and own_code(root.id)

    def own_code(name: str) -> bool:
        """A class or function of the notebook's (a module's function cannot keep what it is given
        where the graded code reads it), or the course's data."""
        bindings = kinds.bindings(name)
        if kinds.kind(name) == "given":            # the course's data, not a module it imports
            return not all(isinstance(b, (ast.Import, ast.ImportFrom)) for b in bindings)
        return kinds.kind(name) == "code" and any(
            isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign))
            for b in bindings)

    def code_store(target: ast.AST) -> bool:
        """An attribute or item stored onto the notebook's code or the course's data (a store into
        any other object is seen where the graded code reads that object)."""
        if not isinstance(target, (ast.Attribute, ast.Subscript)):
            return False
        root: ast.AST = target
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        return not isinstance(root, ast.Name) or kinds.kind(root.id) in ("code", "given")

    carried: set[int] = set()
    for x in ast.walk(stmt):
        values: list[ast.AST] = []
        if isinstance(x, ast.Call) and code_call(x):
            values = [*x.args, *(k.value for k in x.keywords)]
        elif isinstance(x, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = x.targets if isinstance(x, ast.Assign) else [x.target]
            if any(code_store(t) for t in targets) and x.value is not None:
                values = [x.value]
        carried |= {id(v) for value in values for v in ast.walk(value) if isinstance(v, ast.Name)}
    return carried


def _bound(stmt: ast.stmt) -> list[str]:
    """Every name a top-level statement binds, in its own body too (a loop's, an ``if``'s)."""
    return [name for s in top_level([stmt]) for name in bound_names(s)]


def _in_code(stmt: ast.stmt) -> set[int]:
    """The nodes of a top-level statement that are code: inside a def, a lambda or a class body."""
    inside: set[int] = set()
    for x in ast.walk(stmt):
        if isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) \
                and id(x) not in inside:          # a nested def is inside its outer one already
            inside |= {id(y) for y in ast.walk(x)}
    return inside


def _class_stores(cls: ast.ClassDef, reading: Reading) -> list[str]:
    """A class on the way whose own code can change the class itself from a call the reading cannot
    tie to it (``reg = Reg(); reg.register(piece)`` with ``cls.step = piece`` in a classmethod): a
    metaclass, or a classmethod that stores onto its ``cls``."""
    if cls.keywords or any(isinstance(b, ast.Name) and b.id == "type" for b in cls.bases):
        return [f"{cls.name} has a metaclass or is one, whose methods change a class from calls the "
                "grader cannot follow" + _line(reading, cls)]
    found = []
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args \
                or not any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list):
            continue
        first = fn.args.args[0].arg
        for x in ast.walk(fn):
            targets = x.targets if isinstance(x, ast.Assign) else [x.target] \
                if isinstance(x, (ast.AugAssign, ast.AnnAssign)) else []
            stored = any(isinstance(t, (ast.Attribute, ast.Subscript)) and isinstance(t.value, ast.Name)
                         and t.value.id == first for t in targets)
            set_by_call = isinstance(x, ast.Call) and isinstance(x.func, ast.Name) \
                and x.func.id in ("setattr", "delattr") and x.args \
                and isinstance(x.args[0], ast.Name) and x.args[0].id == first
            if stored or set_by_call:
                found.append(f"{cls.name}.{fn.name} stores onto its class through `{first}`, from calls "
                             "the grader cannot tie to the class" + _line(reading, x))
    return found


def _within_plain_binding(n: ast.Name, stmt: ast.stmt, kinds: _Kinds) -> bool:
    """Whether a read is part of the binding of a plain value (``V = len(chars)``: what it reads
    to work the value out cannot be kept in it)."""
    for s in top_level([stmt]):
        names = bound_names(s) if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else []
        if names and all(kinds.kind(x) == "plain" for x in names) \
                and any(x is n for x in ast.walk(s)):
            return True
    return False
