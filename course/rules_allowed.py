"""What a notebook may use: the modules, names and objects the rules allow, and how a chain that
starts at a module is resolved against the real modules (in the grader, never in the
submission's process). See :mod:`course.rules`."""
from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import sys
import types
from collections.abc import Iterable

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
              "course.rules", "course.rules_allowed", "course.rules_checker", "course.rules_magics",
              "course.rules_scopes", "course.serve", "course.handles", "course.wire",
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


