"""The page's rules: your own code, built from what the course allows, and no ready-made
transformer pieces in the code that is graded.

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

What static reading cannot see is listed in the README (Safety): code that public library
functions run on the notebook's behalf from data (a pickle, a name in a string passed to a
library function), and what a notebook's process does to itself at run time.
"""
from __future__ import annotations

import ast
import builtins
import functools
import importlib
import importlib.util
import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass, field

FORBIDDEN_NAMES = {
    "scaled_dot_product_attention": "F.scaled_dot_product_attention",
    "multi_head_attention_forward": "F.multi_head_attention_forward",
    "MultiheadAttention": "nn.MultiheadAttention",
    "Transformer": "nn.Transformer",
    "TransformerEncoder": "nn.TransformerEncoder",
    "TransformerEncoderLayer": "nn.TransformerEncoderLayer",
    "TransformerDecoder": "nn.TransformerDecoder",
    "TransformerDecoderLayer": "nn.TransformerDecoderLayer",
}
# torch's own kernels behind those pieces, by the words in their names (for the runtime watch)
_KERNEL_WORDS = ("scaled_dot_product", "multi_head_attention", "transformer_encoder", "transformer_decoder",
                 "flash_attention", "efficient_attention", "cudnn_attention", "triton_scaled_dot")


def _forbidden_word(word: str) -> str | None:
    """The forbidden piece ``word`` names (also torch's private kernels behind them)."""
    if word in FORBIDDEN_NAMES:
        return FORBIDDEN_NAMES[word]
    if any(k in word for k in _KERNEL_WORDS):
        return word
    return None


ALLOWED_MODULES = frozenset({
    # PyTorch: tensors, layers, initialisation, optimisers, autograd, data, devices
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.parameter",
    "torch.optim", "torch.optim.lr_scheduler", "torch.linalg", "torch.special", "torch.fft",
    "torch.autograd", "torch.autograd.functional", "torch.func", "torch.random", "torch.distributions",
    "torch.utils", "torch.utils.data", "torch.testing", "torch.cuda", "torch.mps", "torch.amp",
    "torch.backends", "torch.backends.mps", "torch.backends.cuda", "torch.backends.cudnn",
    # Python's and the notebook's usual companions
    "math", "cmath", "random", "time", "datetime", "statistics", "itertools", "functools", "operator",
    "collections", "collections.abc", "dataclasses", "typing", "enum", "abc", "copy", "types",
    "re", "json", "textwrap", "pprint", "warnings", "heapq", "bisect", "contextlib", "__future__",
    "numpy", "numpy.random", "numpy.linalg", "numpy.fft",
    "matplotlib", "matplotlib.pyplot", "matplotlib.ticker", "matplotlib.colors", "matplotlib.cm",
    "tqdm", "tqdm.auto", "tqdm.notebook", "IPython.display",
    "google.colab", "google.colab.drive", "google.colab.files",     # on Colab (not there when grading)
    # the course's own public modules (not the grading machinery: handles, serve, wire, rules, ...)
    "course", "course.stories", "course.training", "course.data", "course.plots", "course.nets",
    "course.two_sentences", "course.tinydenoiser", "course.tinydenoiser_curve",
})
# modules of which only these names are allowed, or all public names but these
_ONLY_NAMES = {"types": {"SimpleNamespace"}}
_DENIED_NAMES = {"operator": {"attrgetter", "methodcaller"},            # attribute access by computed names
                 "functools": {"update_wrapper"},                        # copies attributes named in strings
                 "typing": {"get_type_hints", "ForwardRef"}}             # evaluate code in strings
# modules whose use can change the graded code from anywhere (not only where it is reached)
_MACHINERY = {"sys", "builtins", "importlib", "gc", "ctypes", "inspect", "types", "autograder",
              "course.rules", "course.serve", "course.handles", "course.wire",
              *(f"{m}.{n}" for m, names in _DENIED_NAMES.items() for n in names)}
# where torch's machinery lives: objects from these modules are not allowed wherever they are reached
_DENIED_ORIGINS = ("torch.overrides", "torch.jit", "torch.library", "torch.fx", "torch._dynamo",
                   "torch.compiler", "torch.export", "torch.hub", "torch.package", "torch._ops",
                   "torch._higher_order_ops", "torch._utils_internal", "torch.utils.cpp_extension",
                   "torch.utils._python_dispatch", "torch._C._functorch", "torch.ops", "torch.classes")
# torch.nn.attention holds ready-made attention (flex_attention, sdpa_kernel): a forbidden piece
_PIECE_ORIGINS = ("torch.nn.attention", "torch.nn.modules.transformer")
# the names torch._C's classes may have in a notebook's code (the rest: DisableTorchFunction, ...)
_C_CLASSES_OK = {"Generator", "LinAlgError", "Size", "dtype", "device", "finfo", "iinfo", "layout",
                 "memory_format"}

DUNDER_ATTRIBUTES = {"__init__", "__name__", "__qualname__", "__doc__", "__module__", "__version__",
                     "__file__"}
_DUNDER_NAMES = {"__name__", "__doc__", "__debug__", "__file__"}
SPECIAL_METHODS = {
    "__init__", "__post_init__", "__call__", "__repr__", "__str__", "__format__", "__len__", "__iter__",
    "__next__", "__reversed__", "__getitem__", "__setitem__", "__delitem__", "__contains__", "__enter__",
    "__exit__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__",
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__",
    "__imul__", "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__",
    "__rmatmul__", "__neg__", "__pos__", "__abs__", "__int__", "__float__", "__index__", "__slots__",
}
# public-looking attributes of the interpreter's own objects (frames, generators, tracebacks, code)
_INTERNALS = {"gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame",
              "ag_code", "ag_await", "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace",
              "tb_frame", "tb_next", "co_code", "co_consts", "co_names"}
_NAMEDTUPLE = {"_replace", "_asdict", "_fields", "_make"}      # public API with an underscore
_CODE_FROM_STRINGS = {"exec", "eval", "compile"}
_NAMESPACES = {"globals", "locals", "vars"}
_ATTRIBUTE_BUILTINS = {"getattr", "setattr", "hasattr", "delattr"}
_MAY_SHOW_MODULES = {"help", "dir", "print"}                  # a module as their argument is fine
_IPYTHON_NAMES = {"get_ipython", "display", "In", "Out"}
_MAGIC_METHODS = {"run_line_magic", "run_cell_magic", "system", "getoutput"}
# names a notebook uses without importing them (when nothing in it binds them)
_CONVENTIONAL = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "np": "numpy",
                 "math": "math", "plt": "matplotlib.pyplot"}

PIECE, RULE, FAR = "piece", "rule", "far"
# The magics whose body still runs under the grader (autograder/runner.py, _Shell.RUN_BODY): the
# rules read their bodies as the cell's own code.
RUN_BODY = {"time", "timeit", "capture", "prun"}
_MAGIC_CALLS = {"run_cell_magic": 2, "run_line_magic": 1}     # where the code is among the arguments


def _plain_strings(args: list[ast.expr]) -> bool:
    return all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args)


def _magic_body(node: ast.AST, depth: int) -> list[ast.stmt] | None:
    """The statements a ``run_cell_magic``/``run_line_magic`` call runs under the grader (a magic
    in RUN_BODY, called with plain strings), unfolded in turn; None for any other node."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MAGIC_CALLS and len(node.args) > _MAGIC_CALLS[node.func.attr]
            and _plain_strings(node.args) and node.args[0].value in RUN_BODY and depth < 8):
        return None
    try:
        inner = _unfold_magics(ast.parse(_transform(node.args[_MAGIC_CALLS[node.func.attr]].value)),
                               depth + 1)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return inner.body or [ast.Pass()]


def _own_expressions(stmt: ast.stmt) -> Iterable[ast.AST]:
    """Every node in a statement's own expressions (not in the statements nested in its body)."""
    for _, value in ast.iter_fields(stmt):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (ast.expr, ast.withitem, ast.keyword, ast.arguments, ast.comprehension)):
                yield from ast.walk(item)


def _unfold_magics(tree: ast.Module, depth: int = 0) -> ast.Module:
    """Put the statements of each ``get_ipython().run_cell_magic("time", "", body)`` (what
    ``%%time`` becomes; also ``run_line_magic``) in place of the call: instead of it when the call
    is a statement of its own (as IPython writes it), else right after the statement that makes
    it. A call whose magic or body is not a plain string, or nested over 8 deep, is left as it is
    (and read as running code built at run time)."""

    class Unfold(ast.NodeTransformer):
        def generic_visit(self, node: ast.AST):
            node = super().generic_visit(node)
            if not isinstance(node, ast.stmt):
                return node
            if isinstance(node, ast.Expr):
                inner = _magic_body(node.value, depth)
                if inner is not None:
                    return inner
            extra = [s for n in _own_expressions(node) for s in (_magic_body(n, depth) or [])]
            return [node, *extra] if extra else node

    return ast.fix_missing_locations(Unfold().visit(tree))


def _computed_magic(node: ast.AST) -> bool:
    """A ``run_cell_magic``/``run_line_magic`` call left after :func:`_unfold_magics` that may run
    code the rules have not read: its arguments are not all plain strings, or it names a magic
    whose body runs (not a statement of its own as IPython writes it, or nested too deep)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MAGIC_CALLS):
        return False
    return not _plain_strings(node.args) or (bool(node.args) and node.args[0].value in RUN_BODY)


def _transform(source: str) -> str:
    """IPython syntax (``%magic``, ``!cmd``, ``x?``) as harmless Python, so that the cell parses."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:
        return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def _strip_magics(source: str) -> str:
    """The cell as plain Python: IPython syntax made harmless, and the bodies of the magics that
    still run (``%%capture``, ``%%time``, ``%time x = ...``) put in place of the magic."""
    text = _transform(source)
    if "_magic" not in text:
        return text
    try:
        return ast.unparse(_unfold_magics(ast.parse(text)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text




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


def _touched(node: ast.AST) -> set[str]:
    """The names whose objects a statement (or a function it defines) may change in place:
    ``h.x = ...``, ``h[k] = ...``, ``del h.x``, ``setattr(h, ...)``, ``h.append(...)`` as a
    statement."""
    names = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and not isinstance(n.ctx, ast.Load):
            names.add(_root_name(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.args \
                and n.func.id in ("setattr", "delattr"):
            names.add(_root_name(n.args[0]))
        elif isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) \
                and isinstance(n.value.func, ast.Attribute):
            names.add(_root_name(n.value.func.value))
    names.discard(None)
    return names


def _live(trees: Iterable[ast.Module]) -> dict[str, list[ast.stmt]]:
    """For each notebook-level name, the statements that may decide what it is once the notebook
    has run: the last binding at a cell's top level and every later one inside an if/for/try/...
    (which may or may not run); every function or class that declares it ``global`` (it may be
    called at any time); every statement that changes its object in place (:func:`_touched`)."""
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
                for name in _touched(node):
                    later.setdefault(name, []).append(node)
    for name, nodes in later.items():
        if name in live:
            live[name].extend(nodes)
    return live


@functools.lru_cache(maxsize=256)
def _import(name: str) -> types.ModuleType | None:
    """The module ``name`` when it is allowed (imported here, in the grader: library code only)."""
    if name not in ALLOWED_MODULES:
        return None
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def _is_submodule(module: types.ModuleType, name: str) -> bool:
    return _is_module_name(f"{getattr(module, '__name__', '')}.{name}", hasattr(module, "__path__"))


@functools.lru_cache(maxsize=4096)
def _is_module_name(full: str, package: bool) -> bool:
    if full in sys.modules:
        return True
    if not package:
        return False
    try:
        return importlib.util.find_spec(full) is not None
    except Exception:
        return False


class _NotAllowed(Exception):
    """A step into a module that is not allowed (the exception's text: its full name)."""


def _step(obj: object, name: str) -> object:
    """``obj.name`` for a chain's next step, without importing a module the rules do not allow
    (a submodule not yet imported is imported only when it is allowed)."""
    if not isinstance(obj, types.ModuleType):
        return getattr(obj, name)
    mname = getattr(obj, "__name__", "")
    only, denied = _ONLY_NAMES.get(mname), _DENIED_NAMES.get(mname, ())
    if (only is not None and name not in only) or name in denied:
        raise _NotAllowed(f"{mname}.{name}")
    return _member(obj, name)


def _member(module: types.ModuleType, name: str) -> object:
    """``module.name`` from the module's namespace, or its submodule; never through the module's
    own ``__getattr__`` (which may load data, or import what the rules do not allow)."""
    namespace = getattr(module, "__dict__", {})
    if name in namespace:
        return namespace[name]
    sub = f"{getattr(module, '__name__', '')}.{name}"
    if _is_submodule(module, name):
        if sub not in ALLOWED_MODULES:
            raise _NotAllowed(sub)
        found = _import(sub)
        if found is not None:
            return found
    raise AttributeError(sub)


@functools.lru_cache(maxsize=1)
def _pieces() -> tuple[dict[int, str], tuple[type, ...]]:
    """The ready-made pieces the page forbids: {id: name}, and the classes among them."""
    import torch.nn as nn
    import torch.nn.functional as F
    objects = {}
    for word, shown in FORBIDDEN_NAMES.items():
        obj = getattr(F, word, None) or getattr(nn, word, None)
        if obj is not None:
            objects[id(obj)] = shown
    classes = tuple(getattr(nn, w) for w in FORBIDDEN_NAMES if isinstance(getattr(nn, w, None), type))
    return objects, classes


def _origin(obj: object) -> str:
    if not (isinstance(obj, type) or callable(obj)):
        return ""
    try:
        origin = getattr(obj, "__module__", "") or ""
    except Exception:
        return ""
    return origin if isinstance(origin, str) else ""


def _within(name: str, families: Iterable[str]) -> bool:
    return any(name == f or name.startswith(f + ".") for f in families)


def _judge(obj: object, shown: str) -> tuple[str, str] | None:
    """(kind, what) when reaching ``obj`` (written ``shown``) breaks a rule; None when it is fine."""
    objects, classes = _pieces()
    if id(obj) in objects:
        name = objects[id(obj)]
        alias, _, rest = name.partition(".")
        full = {"F": "torch.nn.functional", "nn": "torch.nn"}[alias] + "." + rest
        return PIECE, name if shown in (name, full) else f"{name} (as {shown})"
    try:
        if isinstance(obj, type) and classes and issubclass(obj, classes):
            return PIECE, f"{shown} (a ready-made transformer piece)"
    except TypeError:
        pass
    if isinstance(obj, types.ModuleType):
        name = getattr(obj, "__name__", shown)
        if not isinstance(name, str) or name not in ALLOWED_MODULES:
            return _kind(str(name)), f"{shown}, which is not allowed"
        return None
    origin = _origin(obj)
    if _within(origin, _PIECE_ORIGINS):
        return PIECE, f"{shown} (a ready-made piece from {origin})"
    if _within(origin, _DENIED_ORIGINS):
        return RULE, f"{shown}, which is not allowed (it belongs to {origin})"
    if isinstance(obj, type) and _within(origin, ("torch._C",)) and obj.__name__ not in _C_CLASSES_OK:
        return RULE, f"{shown}, which is not allowed (torch's machinery, {origin})"
    return None


def _shown(node: ast.AST) -> str:
    """Short source text of an expression, for a message."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args and not node.keywords:
        return f"{node.func.id}()"
    if isinstance(node, (ast.Call, ast.Subscript, ast.Attribute)):
        inner = node.func if isinstance(node, ast.Call) else node.value
        if isinstance(node, ast.Attribute):
            return f"{_shown(inner)}.{node.attr}"
        return _shown(inner) + ("(...)" if isinstance(node, ast.Call) else "[...]")
    return "(...)"


def _kind(module: str) -> str:
    """How much reaching a module that is not allowed costs (:data:`_MACHINERY`: the most)."""
    return FAR if _within(module, _MACHINERY) else RULE


_CHANGES = "(a notebook may not change the modules it uses)"


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _plain_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


@dataclass
class _Binding:
    kind: str                  # module, object, star, def, class, param, other
    pos: tuple[int, int]       # (cell, line)
    modules: list[tuple[str, types.ModuleType | None]] = field(default_factory=list)
    objects: list[tuple[str, object]] = field(default_factory=list)


class _Scope:
    def __init__(self, node: ast.AST | None, kind: str, parent: _Scope | None) -> None:
        self.node, self.kind, self.parent = node, kind, parent    # kind: module/function/class/comp
        self.bound: dict[str, list[_Binding]] = {}
        self.globals: set[str] = set()
        self.trusted: str | None = None      # "self" / "cls": the first parameter of a method
        self.owner: str | None = None        # the class a method belongs to

    def bind(self, name: str, binding: _Binding) -> None:
        self.bound.setdefault(name, []).append(binding)


@dataclass
class _Finding:
    cell: int
    node: ast.AST
    what: str
    kind: str


def _is_method(node: ast.AST, parent: _Scope) -> str | None:
    """'self' or 'cls' when ``node`` is a method whose first parameter is its object (or class)."""
    if parent.kind != "class" or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
    params = node.args.posonlyargs + node.args.args
    if "staticmethod" in decorators or not params:
        return None
    first = params[0].arg
    if "classmethod" in decorators:
        return "cls" if first == "cls" else None
    return "self" if first == "self" else None


_PLAIN = {ast.Attribute, ast.Expr, ast.BinOp, ast.Constant, ast.Subscript, ast.keyword, ast.Tuple, ast.List,
          ast.Return, ast.Compare, ast.UnaryOp, ast.BoolOp, ast.IfExp, ast.Slice, ast.Dict, ast.Set,
          ast.JoinedStr, ast.FormattedValue, ast.If, ast.For, ast.While, ast.With, ast.withitem, ast.Assign,
          ast.AugAssign, ast.Starred, ast.Assert, ast.Raise, ast.Try, ast.Pass, ast.Break, ast.Continue,
          ast.Load, ast.Store, ast.Del, ast.Delete, ast.Yield, ast.YieldFrom, ast.Await, ast.AnnAssign}


class _Binder:
    """First pass: the scopes of the notebook's code and what each binds."""

    def __init__(self, reading: _Reading) -> None:
        self.r = reading

    def scope(self, node: ast.AST, parent: _Scope, kind: str) -> _Scope:
        s = _Scope(node, kind, parent)
        self.r.scopes[id(node)] = s
        return s

    def trusts(self, scope: _Scope) -> None:
        """The method around ``scope`` relies on its self being its own object."""
        while scope is not None and scope.owner is None:
            scope = scope.parent
        if scope is not None:
            self.r.trusting_methods.add(scope.node.name)
            self.r.trusting_classes.add(scope.owner)

    def bind(self, scope: _Scope, name: str, b: _Binding) -> None:
        while scope.kind == "comp" and b.kind == "walrus":
            scope = scope.parent
        if name in scope.globals:
            scope = self.r.module
        scope.bind(name, b)

    def run(self, node: ast.AST, scope: _Scope, cell: int) -> None:
        kind = type(node)
        if kind in _PLAIN:                     # most nodes bind nothing: straight to their children
            if kind is ast.Attribute and type(node.value) is ast.Name and node.value.id in ("self", "cls") \
                    and node.attr.startswith("_") and not _dunder(node.attr):
                self.trusts(scope)
            for child in ast.iter_child_nodes(node):
                self.run(child, scope, cell)
            return
        if kind is ast.Call and type(node.func) is ast.Name and node.func.id in _ATTRIBUTE_BUILTINS \
                and len(node.args) >= 2 and type(node.args[0]) is ast.Name \
                and node.args[0].id in ("self", "cls") and not _plain_string(node.args[1]):
            self.trusts(scope)
        pos = (cell, getattr(node, "lineno", 0))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not isinstance(node, ast.Lambda):
                self.bind(scope, node.name, _Binding("def", pos))
                for d in node.decorator_list:
                    self.run(d, scope, cell)
                if node.returns:
                    self.run(node.returns, scope, cell)
            args = node.args
            for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
                self.run(d, scope, cell)
            inner = self.scope(node, scope, "function")
            trusted = _is_method(node, scope)
            if trusted:
                inner.trusted = trusted
                inner.owner = scope.node.name if isinstance(scope.node, ast.ClassDef) else None
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None:
                    inner.bind(a.arg, _Binding("param", pos))
                    if a.annotation:
                        self.run(a.annotation, scope, cell)
            body = node.body if isinstance(node.body, list) else [node.body]
            for stmt in body:
                self.run(stmt, inner, cell)
            return
        if isinstance(node, ast.ClassDef):
            self.bind(scope, node.name, _Binding("class", pos))
            for n in node.decorator_list + node.bases + [k.value for k in node.keywords]:
                self.run(n, scope, cell)
            inner = self.scope(node, scope, "class")
            for stmt in node.body:
                self.run(stmt, inner, cell)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            self.run(node.generators[0].iter, scope, cell)
            inner = self.scope(node, scope, "comp")
            for i, g in enumerate(node.generators):
                self.run(g.target, inner, cell)
                if i:
                    self.run(g.iter, inner, cell)
                for c in g.ifs:
                    self.run(c, inner, cell)
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                self.run(part, inner, cell)
            return
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.bind(scope, a.asname, _Binding("module", pos, [(a.name, _import(a.name))]))
                else:
                    top = a.name.split(".")[0]
                    self.bind(scope, top, _Binding("module", pos, [(top, _import(top))]))
            return
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            module = _import(source) if not node.level else None
            for a in node.names:
                if a.name == "*":
                    if module is not None:
                        names = getattr(module, "__all__", None) or [n for n in dir(module) if n[:1] != "_"]
                        for n in names:
                            if isinstance(n, str):
                                self.bind(scope, n, _Binding("star", pos, [(source, module)]))
                    continue
                bound = a.asname or a.name
                full = f"{source}.{a.name}"
                obj = None
                if module is not None and not a.name.startswith("_"):
                    try:
                        obj = _member(module, a.name)
                    except Exception:
                        pass
                if isinstance(obj, types.ModuleType) or (module is None and full in ALLOWED_MODULES) \
                        or (module is not None and obj is None and _is_submodule(module, a.name)):
                    self.bind(scope, bound, _Binding("module", pos, [(full, _import(full))]))
                else:
                    self.bind(scope, bound, _Binding("object", pos, objects=[(full, obj)]))
            return
        if isinstance(node, ast.Global):           # before any use of the names, as Python requires
            scope.globals |= set(node.names)
            return
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                self.bind(scope, node.id, _Binding("other", pos))
            return
        if isinstance(node, ast.NamedExpr):
            self.bind(scope, node.target.id, _Binding("walrus", pos))
            self.run(node.value, scope, cell)
            return
        if isinstance(node, ast.ExceptHandler) and node.name:
            self.bind(scope, node.name, _Binding("other", pos))
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            self.bind(scope, node.name, _Binding("other", pos))
        if isinstance(node, ast.MatchMapping) and node.rest:
            self.bind(scope, node.rest, _Binding("other", pos))
        for child in ast.iter_child_nodes(node):
            self.run(child, scope, cell)


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
        if k.arg == "weights_only" and not (isinstance(k.value, ast.Constant) and k.value.value is True):
            self.found(node, "loads pickled code (weights_only is not True)", FAR)
        elif k.arg == "pickle_module":
            self.found(node, "loads pickled code (pickle_module)", FAR)
        elif k.arg == "allow_pickle" and not (isinstance(k.value, ast.Constant) and k.value.value is False):
            self.found(node, "loads pickled code (allow_pickle)", FAR)

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
    live = _live(tree for _, tree in reading.trees)
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
                  if r in live and r in blank and ast.dump(live[r][-1]) == blank[r]]
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


