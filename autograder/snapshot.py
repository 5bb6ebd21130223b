"""Tamper detection: what torch, numpy, math, builtins and the course look like before student code.

A submission that replaces ``torch.allclose``, patches a method of ``torch.Tensor``, rewrites the
code of a course function or swaps a module in ``sys.modules`` could make tests pass without a
correct answer. :meth:`Snapshot.take` records, before any student code runs, every callable, class
and module reachable as an attribute of the watched modules and classes (and the code objects of
functions); :meth:`Snapshot.compare` lists what changed. New attributes of a module are allowed
(lazy imports add some); a new attribute of a class that shadows an inherited one is not.
"""
from __future__ import annotations

import builtins
import sys
import types
from typing import Any

WATCHED_MODULES = ["builtins", "math", "random", "numpy", "numpy.testing", "numpy.linalg", "torch",
                   "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.linalg", "torch.testing",
                   "torch.autograd", "torch.optim", "inspect", "json"]
WATCHED_CLASSES = [("torch", "Tensor"), ("torch._C", "TensorBase"), ("torch.nn", "Module"),
                   ("torch.nn", "Parameter"), ("numpy", "ndarray")]
COURSE_PREFIX = "course"


def _watchable(value: Any) -> bool:
    return callable(value) or isinstance(value, (types.ModuleType, type))


def _code_of(value: Any) -> Any:
    code = getattr(value, "__code__", None) if isinstance(value, types.FunctionType) else None
    if code is None:
        return None
    return (code, value.__defaults__, value.__kwdefaults__)


class Snapshot:
    """The watched objects as they were when the snapshot was taken."""

    def __init__(self) -> None:
        self.attrs: dict[tuple[str, str], Any] = {}
        self.codes: dict[tuple[str, str], Any] = {}
        self.class_dirs: dict[str, tuple[type, set[str], set[str]]] = {}
        self.modules: dict[str, Any] = {}
        self.owners: dict[str, Any] = {}

    @classmethod
    def take(cls) -> Snapshot:
        snap = cls()
        names = list(WATCHED_MODULES) + sorted(n for n in sys.modules
                                               if n == COURSE_PREFIX or n.startswith(COURSE_PREFIX + "."))
        for name in names:
            mod = sys.modules.get(name)
            if mod is None:
                continue
            snap.modules[name] = mod
            snap._record(name, mod, vars(mod))
        classes = list(WATCHED_CLASSES)
        for name in names:                    # the course's own classes too (its Server, its Watch)
            if name.startswith(COURSE_PREFIX) and sys.modules.get(name) is not None:
                classes += [(name, k) for k, v in vars(sys.modules[name]).items()
                            if isinstance(v, type) and getattr(v, "__module__", "") == name]
        for mod_name, cls_name in classes:
            mod = sys.modules.get(mod_name)
            klass = getattr(mod, cls_name, None) if mod is not None else None
            if isinstance(klass, type):
                label = f"{mod_name}.{cls_name}"
                snap.class_dirs[label] = (klass, set(dir(klass)), set(vars(klass)))
                snap._record(label, klass, dict(vars(klass)))
        return snap

    def _record(self, label: str, owner: Any, namespace: dict) -> None:
        self.owners[label] = owner
        for key, value in list(namespace.items()):
            if not _watchable(value):
                continue
            self.attrs[(label, key)] = value
            code = _code_of(value)
            if code is not None:
                self.codes[(label, key)] = code

    def compare(self) -> list[str]:
        """What changed since the snapshot, in words (empty when nothing did)."""
        found: list[str] = []
        for name, mod in self.modules.items():
            if sys.modules.get(name) is not mod:
                found.append(f"sys.modules[{name!r}] was replaced")
        for (label, key), value in self.attrs.items():
            owner = self.owners[label]
            namespace = vars(owner)
            if key not in namespace:
                found.append(f"{label}.{key} was deleted")
            elif namespace[key] is not value:
                found.append(f"{label}.{key} was replaced")
            elif (label, key) in self.codes and _code_of(value) != self.codes[(label, key)]:
                found.append(f"the code of {label}.{key} was changed")
        for label, (klass, inherited, own) in self.class_dirs.items():
            for key in vars(klass):
                if key not in own and key in inherited:
                    found.append(f"{label}.{key} was overridden")
        if builtins.__import__ is not self.attrs.get(("builtins", "__import__")):
            found.append("builtins.__import__ was replaced")
        return sorted(set(found))
