"""How a chain that starts at a module is resolved against the real modules (in the grader, never in
the submission's process), and what reaching an object costs."""
from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import types
from collections.abc import Iterable

from .allowed import (
    ALLOWED_MODULES,
    C_CLASSES_OK,
    DENIED_NAMES,
    DENIED_ORIGINS,
    FORBIDDEN_NAMES,
    LOADERS,
    MACHINERY,
    ONLY_NAMES,
    PIECE_ORIGINS,
)
from .findings import Kind

CHANGES = "(a notebook may not change the modules it uses)"


def import_allowed(name: str) -> types.ModuleType | None:
    """The module ``name`` when it is allowed (imported here, in the grader: library code only)."""
    if name not in ALLOWED_MODULES:
        return None
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def is_submodule(module: types.ModuleType, name: str) -> bool:
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


class NotAllowed(Exception):
    """A step into a module that is not allowed (the exception's text: its full name)."""


def step(obj: object, name: str) -> object:
    """``obj.name`` for a chain's next step, without importing a module the rules do not allow
    (a submodule not yet imported is imported only when it is allowed)."""
    if not isinstance(obj, types.ModuleType):
        return getattr(obj, name)
    mname = getattr(obj, "__name__", "")
    only, denied = ONLY_NAMES.get(mname), DENIED_NAMES.get(mname, ())
    if (only is not None and name not in only) or name in denied:
        raise NotAllowed(f"{mname}.{name}")
    return member(obj, name)


def member(module: types.ModuleType, name: str) -> object:
    """``module.name`` from the module's namespace, or its submodule; never through the module's
    own ``__getattr__`` (which may load data, or import what the rules do not allow)."""
    namespace = getattr(module, "__dict__", {})
    if name in namespace:
        return namespace[name]
    sub = f"{getattr(module, '__name__', '')}.{name}"
    if is_submodule(module, name):
        if sub not in ALLOWED_MODULES:
            raise NotAllowed(sub)
        found = import_allowed(sub)
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


@functools.lru_cache(maxsize=1)
def _loaders() -> dict[int, str]:
    """The loaders of allowed modules (:data:`LOADERS`), {id: name}."""
    found = {}
    for name in LOADERS:
        module, _, attr = name.rpartition(".")
        obj = getattr(import_allowed(module), attr, None)
        if obj is not None:
            found[id(obj)] = name
    return found


def origin(obj: object) -> str:
    """The module an object (a class or a callable) says it comes from; empty for other objects."""
    if not (isinstance(obj, type) or callable(obj)):
        return ""
    try:
        found = getattr(obj, "__module__", "") or ""
    except Exception:
        return ""
    return found if isinstance(found, str) else ""


def within(name: str, families: Iterable[str]) -> bool:
    return any(name == f or name.startswith(f + ".") for f in families)


def judge(obj: object, shown: str) -> tuple[Kind, str] | None:
    """(kind, what) when reaching ``obj`` (written ``shown``) breaks a rule; None when it is fine."""
    objects, classes = _pieces()
    if id(obj) in objects:
        name = objects[id(obj)]
        alias, _, rest = name.partition(".")
        full = {"F": "torch.nn.functional", "nn": "torch.nn"}[alias] + "." + rest
        return Kind.PIECE, name if shown in (name, full) else f"{name} (as {shown})"
    if id(obj) in _loaders():
        return Kind.FAR, f"{shown}, a loader (what it reads may run code the rules have not read)"
    try:
        if isinstance(obj, type) and classes and issubclass(obj, classes):
            return Kind.PIECE, f"{shown} (a ready-made transformer piece)"
    except TypeError:
        pass
    if isinstance(obj, types.ModuleType):
        name = getattr(obj, "__name__", shown)
        if not isinstance(name, str) or name not in ALLOWED_MODULES:
            return module_kind(str(name)), f"{shown}, which is not allowed"
        return None
    where = origin(obj)
    if within(where, PIECE_ORIGINS):
        return Kind.PIECE, f"{shown} (a ready-made piece from {where})"
    if within(where, DENIED_ORIGINS):
        return Kind.RULE, f"{shown}, which is not allowed (it belongs to {where})"
    if isinstance(obj, type) and within(where, ("torch._C",)) and obj.__name__ not in C_CLASSES_OK:
        return Kind.RULE, f"{shown}, which is not allowed (torch's machinery, {where})"
    return None


def module_kind(module: str) -> Kind:
    """How much reaching a module that is not allowed costs (:data:`MACHINERY`: the most)."""
    return Kind.FAR if within(module, MACHINERY) else Kind.RULE
