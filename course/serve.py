"""The side of a check that touches your objects: it answers requests about them.

A check never looks inside your notebook directly. It asks: "make a ``Head(8, 4)``", "call it on
this tensor", "what are its parameters?", "set them to these values", "what are the gradients
for this cotangent?". :class:`Server` answers such requests for the objects of one namespace
(your notebook's), and hands back only plain data (see :mod:`course.wire`) or handles to objects
that stay here. The check decides what the answers are worth.

When you run ``grader.check`` the server runs inside your own notebook. Under ``course grade``
it runs inside the process that ran your notebook, and the checks run in the grader.

Requests (a dict; ``target`` is ``[handle, *path]``, a path step an attribute name or an index):

    global  name                   a notebook variable: plain data, or a handle to the object
    globals names [reset]          several at once (after forgetting every handle, with reset)
    given   name                   a name of the ``course`` package (``NoTalking``, ``stories.GetBatch``)
    call    target args kwargs     call it; ``seed`` seeds the random numbers first
    vjp     target args kwargs cotangent   call with gradients on, backward with the cotangent
    describe target args kwargs    call it; only a description of the result (device, dtype, shape)
    get     target                 the value there (plain data or a handle)
    info    target                 its type, base classes, length, identity, requires_grad, ...
    params / buffers target values named parameters / buffers (values, or only shapes)
    modules target                 named submodules and their classes
    set     target values          copy values into named parameters / buffers
    reset                          forget every handle given out
Any request may carry ``swap`` ({name: callback}: notebook globals replaced while it runs) and
``watch`` (["devices"]: record operations that mix devices).
"""
from __future__ import annotations

import functools
import importlib
import inspect
import os
import random
import re
import resource
import struct
import types
import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import torch
import torch.nn as nn

from . import rules, wire

if TYPE_CHECKING:
    from torch.utils._python_dispatch import TorchDispatchMode

MAX_PATH = 16
# what the rules' runtime watch reports when the notebook's work left its process while answering
ANOTHER_PROCESS = "another process while answering (only the notebook's own process may do its work)"


class RequestError(Exception):
    """A request that cannot be answered (not the student's code failing)."""


class GivenPieceError(RuntimeError):
    """A piece the check put in place of a notebook name (this week's given ``Attention``) failed
    when the student's code called it; the message says how, in the student's words."""


def callback_frame(ref: wire.Ref, args: tuple, kwargs: dict, refer: Any) -> bytes:
    """The frame that asks the checking side to run one of its pieces on the student's arguments
    (the checking side refuses tensors without values unless it sent some itself)."""
    try:
        return wire.encode({"callback": ref.id, "args": list(args), "kwargs": kwargs}, refer, meta=True)
    except (wire.WireError, TypeError, ValueError, RecursionError) as exc:
        kind = ref.type.partition(":")[0] or "piece"
        raise GivenPieceError(f"your code handed the given {kind} something that is "
                              f"not plain numbers: {str(exc)[:300]}") from None


def describe(value: Any, depth: int = 0) -> Any:
    """A result described without its values (see ``Handle.describe``)."""
    if isinstance(value, torch.Tensor):
        return {"type": "torch.Tensor", "device": value.device.type,
                "dtype": str(value.dtype).removeprefix("torch."), "shape": [int(n) for n in value.shape],
                "requires_grad": bool(value.requires_grad)}
    if isinstance(value, (tuple, list)) and depth < 4:
        return [describe(v, depth + 1) for v in list(value)[:16]]
    return {"type": qualname(type(value))}


def qualname(cls: type) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', getattr(cls, '__name__', '?'))}"


def mro_names(obj: Any) -> list[str]:
    try:
        return [qualname(c) for c in type(obj).__mro__][:40]
    except Exception:
        return [qualname(type(obj))]


# A stand-in for a piece of the checking side looks like what a notebook would hand the student's
# code there: a plain function of the notebook (``__main__``), or an instance of an ordinary
# ``nn.Module`` subclass defined in the notebook. Nothing in its class, names, ``repr`` or attributes
# says "check", or an answer could be right only when checked (a Head that used the given Attention
# properly only when ``type(Attention).__name__`` named a stand-in). The way back to the checking
# side is a constant of the function's code, not an attribute or a closure that an ordinary notebook
# function would not have.
_LINK = "course.serve: the way back to the checking side"
with warnings.catch_warnings():                    # calling a str constant: replaced before it runs
    warnings.simplefilter("ignore", SyntaxWarning)
    _TRAMPOLINE = next(c for c in compile(f"def f(*args, **kwargs):\n    return {_LINK!r}(args, kwargs)\n",
                                          "<cell 1>", "exec").co_consts if isinstance(c, types.CodeType))
_trampolines: weakref.WeakSet = weakref.WeakSet()   # their code, not the notebook's own (see _where)


def _trampoline_code(link: Callable[[tuple, dict], Any], name: str, like: types.CodeType | None = None,
                     filename: str = "<cell 1>") -> types.CodeType:
    """The code of a function that hands its arguments to ``link``, named ``name`` or, given
    ``like`` (the code of the notebook's own function it stands in for), named and placed as that."""
    code = _TRAMPOLINE.replace(
        co_consts=tuple(link if type(c) is str and c == _LINK else c for c in _TRAMPOLINE.co_consts),
        co_name=like.co_name if like else name, co_qualname=like.co_qualname if like else name,
        co_filename=like.co_filename if like else filename,
        co_firstlineno=like.co_firstlineno if like else 1)
    _trampolines.add(code)
    return code


def _plain_name(name: Any, default: str) -> str:
    return name if type(name) is str and name.isidentifier() and not name.startswith("_") else default


def _callback_function(server: Server, ref: wire.Ref, name: str = "") -> types.FunctionType:
    """A plain notebook function (``__main__``, named ``name`` or as the checking side's) that asks
    there."""
    def link(args: tuple, kwargs: dict) -> Any:
        return server.call_back(ref, args, kwargs)
    name = name or _plain_name(ref.type.partition(":")[2], "f")
    return types.FunctionType(_trampoline_code(link, name, filename=server.cell_file()), server.env, name)


def _callback_module(server: Server, ref: wire.Ref) -> nn.Module:
    """An instance of an ordinary ``nn.Module`` subclass of the notebook (named as the checking
    side's network's class) whose forward asks there. It holds one parameter (zero) so that
    ``next(net.parameters()).device`` and ``.to(device)`` work."""
    name = _plain_name(ref.type.partition(":")[2], "Model")
    module = server.env.get("__name__", "__main__")

    def __init__(self: nn.Module) -> None:
        nn.Module.__init__(self)
        self.anchor = nn.Parameter(torch.zeros(1))

    def forward(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
        out = server.call_back(ref, args, kwargs)
        device = cast(nn.Parameter, self.anchor).device
        return out.to(device) if isinstance(out, torch.Tensor) and out.device != device else out

    for fn in (__init__, forward):
        fn.__module__, fn.__qualname__ = module, f"{name}.{fn.__name__}"
    cls = type(name, (nn.Module,), {"__module__": module, "__qualname__": name,
                                    "__init__": __init__, "forward": forward})
    return cls()


class PretendLogits(nn.Module):
    """A pretend network for the checks of text writers (08's WriteLeftToRight): logits ``last`` at
    the last position and ``elsewhere`` at every other, whatever the tokens. A check makes it here,
    beside the notebook's code (``given("serve.PretendLogits")``), with numbers of its own, so
    that sampling hundreds of tokens costs no round trip per token; the check still counts what
    the notebook's code wrote. The numbers live in a closure, out of the notebook's reach (a writer
    that could change them in place could write what it liked), and every call answers with a
    new tensor. One parameter (zero) so that ``next(net.parameters()).device`` and ``.to(device)``
    work."""

    _logits_of: Callable[[torch.Tensor], torch.Tensor]       # set in __init__

    def __init__(self, last: torch.Tensor, elsewhere: torch.Tensor) -> None:
        super().__init__()
        for t in (last, elsewhere):
            if type(t) is not torch.Tensor or t.dim() != 1 or not t.is_floating_point() \
                    or t.shape != last.shape:
                raise RequestError("PretendLogits takes two 1-d float tensors of one length")
        self.anchor = nn.Parameter(torch.zeros(1))
        kept_last, kept_elsewhere = last.detach().clone(), elsewhere.detach().clone()

        def logits_of(x: torch.Tensor) -> torch.Tensor:
            logits = kept_elsewhere.expand(*x.shape, len(kept_elsewhere)).clone()
            logits[..., -1, :] = kept_last
            return logits
        object.__setattr__(self, "_logits_of", logits_of)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._logits_of(x).to(self.anchor.device)


class Server:
    """Answers requests about the objects of the namespace ``env``.

    ``call_back(ref, args, kwargs)`` is how a stand-in for a callback reaches the checking side.
    ``isolate_rng``: restore the random state after each request (in-process checks, so that the
    check's own random numbers do not depend on what the student's code drew).
    """

    def __init__(self, env: dict, call_back: Callable[[wire.Ref, tuple, dict], Any] | None = None,
                 isolate_rng: bool = False, own_children: bool = False) -> None:
        self.env = env
        self.own_children = own_children      # the grader's process: any child of it is the notebook's
        self.objects: dict[int, Any] = {}
        self.identities: dict[int, int] = {}
        self._keep: list[Any] = []
        self._call_back = call_back
        self.isolate_rng = isolate_rng

    # ------------------------------------------------------------ references
    def refer(self, obj: Any) -> wire.Ref:
        """A handle for an object that is not plain data (it stays here)."""
        ref_id = len(self.objects) + 1
        while ref_id in self.objects:
            ref_id += 1
        self.objects[ref_id] = obj
        try:
            callable_ = callable(obj)
        except Exception:
            callable_ = False
        return wire.Ref("handle", ref_id, qualname(type(obj))[:200], callable_)

    def identity(self, obj: Any) -> int:
        key = id(obj)
        if key not in self.identities:
            self.identities[key] = len(self.identities) + 1
            self._keep.append(obj)          # so that the id is not reused while we remember it
        return self.identities[key]

    def call_back(self, ref: wire.Ref, args: tuple, kwargs: dict) -> Any:
        if self._call_back is None:
            raise RuntimeError("no way to reach the checking side")
        return self._call_back(ref, args, kwargs)

    def resolve(self, target: Any) -> Any:
        if type(target) is not list or not target or not isinstance(target[0], wire.Ref) \
                or target[0].kind != "handle" or len(target) > MAX_PATH + 1:
            raise RequestError("bad target")
        if target[0].id not in self.objects:
            raise RequestError("this handle has expired")
        obj = self.objects[target[0].id]
        for step in target[1:]:
            if type(step) is str:
                if not step.isidentifier() or step.startswith("__"):
                    raise RequestError(f"bad attribute name {step[:40]!r}")
                obj = getattr(obj, step)
            elif type(step) is int:
                obj = obj[step]
            else:
                raise RequestError("bad path")
        return obj

    def _inflate(self, value: Any) -> Any:
        """Decoded request values -> objects: handles to their objects, callbacks to stand-ins."""
        if isinstance(value, wire.Ref):
            if value.kind == "handle":
                return self.resolve([value])
            if value.type.partition(":")[0] == "module":
                return _callback_module(self, value)
            return _callback_function(self, value)
        if type(value) is list:
            return [self._inflate(v) for v in value]
        if type(value) is tuple:
            return tuple(self._inflate(v) for v in value)
        if type(value) is dict:
            return {k: self._inflate(v) for k, v in value.items()}
        return value

    # ------------------------------------------------------------ requests
    def handle(self, request: dict) -> dict:
        """Answer one decoded request: ``{"value": ...}`` (raw objects, to be encoded with
        :meth:`refer`), plus ``forbidden`` / ``mixed_devices`` when something was seen, or
        ``{"error": {"type", "message"}}`` when the student's code raised."""
        op = request.get("op")
        handler = getattr(self, f"_op_{op}", None) if type(op) is str and op.isidentifier() else None
        if handler is None:
            return {"error": {"type": "RequestError", "message": f"unknown request {str(op)[:40]!r}"}}
        watch = rules.Watch()
        processes = _ProcessWatch(self.own_children)
        devices = _DeviceWatch() if "devices" in (request.get("watch") or []) else None
        restore = self._swap(request.get("swap") or {})
        state = _rng_state() if self.isolate_rng else None
        answer: dict[str, Any]
        try:
            seed = request.get("seed")
            if type(seed) is int:
                _seed(seed)
            with watch:
                if devices is not None:
                    with devices:
                        value = handler(request)
                else:
                    value = handler(request)
            answer = {"value": value}
        except RequestError as exc:
            answer = {"error": {"type": "RequestError", "message": str(exc)[:2000]}}
        except Exception as exc:                       # the student's code raised
            answer = {"error": {"type": type(exc).__name__[:100], "message": _text(exc)}}
            where = _where(exc)
            if where:
                answer["error"]["where"] = where
        finally:
            restore()
            if state is not None:
                _set_rng_state(state)
        used = set(watch.used)
        if processes.seen():
            used.add(ANOTHER_PROCESS)
        if used:
            answer["forbidden"] = sorted(used)
        if devices is not None:
            answer["mixed_devices"] = sorted(devices.mixed)[:20]
        return answer

    def _swap(self, swaps: Any) -> Callable[[], None]:
        """Notebook names replaced by the checking side's pieces while a request runs. Where the
        notebook's own is a plain function, that very function asks the checking side (its code is
        swapped, then put back): the student's code holds the object it always holds, so that
        neither its type, its names nor ``is`` tell a check from the notebook's own call."""
        if type(swaps) is not dict:
            raise RequestError("bad swap")
        saved, codes = {}, {}
        for name, ref in swaps.items():
            if type(name) is not str or not isinstance(ref, wire.Ref) or ref.kind != "callback":
                continue
            own = self.env.get(name, _MISSING)
            if ref.type.partition(":")[0] != "module" and _plain_function(own) and own not in codes:
                def link(args: tuple, kwargs: dict, ref: wire.Ref = ref) -> Any:
                    return self.call_back(ref, args, kwargs)
                codes[own] = own.__code__
                own.__code__ = _trampoline_code(link, name, like=own.__code__)
                continue
            saved[name] = own
            self.env[name] = self._inflate(ref) if ref.type.partition(":")[0] == "module" \
                else _callback_function(self, ref, name)

        def restore() -> None:
            for fn, code in codes.items():
                fn.__code__ = code
            for name, old in saved.items():
                if old is _MISSING:
                    self.env.pop(name, None)
                else:
                    self.env[name] = old
        return restore

    def cell_file(self) -> str:
        """Where the notebook's own functions say they come from (``<cell N>`` under the grader)."""
        for value in list(self.env.values()):
            if isinstance(value, types.FunctionType) and value.__code__ not in _trampolines \
                    and value.__module__ == self.env.get("__name__"):
                return value.__code__.co_filename
        return "<cell 1>"

    def _op_global(self, request: dict) -> Any:
        name = request.get("name")
        if type(name) is not str or not name.isidentifier():
            raise RequestError("bad name")
        if name not in self.env:
            raise NameError(f"name {name!r} is not defined in the notebook")
        return self.env[name]

    def _op_globals(self, request: dict) -> Any:
        """Several notebook names at once (what one check is handed): {"found": {name: value},
        "missing": [names not defined, or whose value could not be sent]}; each name fares as it
        would alone. With ``reset``, the handles given out so far are forgotten first."""
        names = request.get("names")
        if type(names) is not list or len(names) > 64 or \
                not all(type(n) is str and n.isidentifier() for n in names):
            raise RequestError("bad names")
        if request.get("reset") is True:
            self._op_reset(request)
        found, missing = {}, []
        for name in names:
            if name not in self.env:
                missing.append(name)
                continue
            try:                  # a value that cannot cross fails alone, not every name beside it
                wire.encode({"value": self.env[name]}, _probe)
            except (wire.WireError, TypeError, ValueError, RecursionError):
                missing.append(name)
                continue
            found[name] = self.env[name]
        return {"found": found, "missing": missing}

    def _op_given(self, request: dict) -> Any:
        name = request.get("name")
        parts = name.split(".") if type(name) is str else []
        if not parts or not all(p.isidentifier() and not p.startswith("_") for p in parts):
            raise RequestError("bad name")
        assert isinstance(name, str)                # parts is not empty
        module, _, attr = name.rpartition(".")
        return getattr(importlib.import_module("course" + ("." + module if module else "")), attr)

    def _op_get(self, request: dict) -> Any:
        return self.resolve(request.get("target"))

    def _op_call(self, request: dict) -> Any:
        fn = self.resolve(request.get("target"))
        args = self._inflate(request.get("args") or [])
        kwargs = self._inflate(request.get("kwargs") or {})
        if type(args) is not list or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
            raise RequestError("bad arguments")
        return fn(*args, **kwargs)

    def _op_describe(self, request: dict) -> Any:
        return describe(self._op_call(request))

    def _op_vjp(self, request: dict) -> Any:
        fn = self.resolve(request.get("target"))
        args = self._inflate(request.get("args") or [])
        kwargs = self._inflate(request.get("kwargs") or {})
        if type(args) is not list or type(kwargs) is not dict:
            raise RequestError("bad arguments")
        args = [a.detach().clone().requires_grad_(True)
                if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
        params = dict(fn.named_parameters()) if isinstance(fn, nn.Module) else {}
        for p in params.values():
            p.grad = None
        with torch.enable_grad():
            out = fn(*args, **kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        cot = request.get("cotangent")
        cots = cot if isinstance(cot, (tuple, list)) else (cot,)
        if len(cots) != len(outs):
            raise RequestError(f"the cotangent has {len(cots)} parts but the output has {len(outs)}")
        pairs = [(o, c) for o, c in zip(outs, cots, strict=True) if c is not None]
        for o, c in pairs:
            if not isinstance(o, torch.Tensor) or tuple(o.shape) != tuple(c.shape):
                raise ValueError(f"an output has shape {tuple(getattr(o, 'shape', ()))}, "
                                 f"expected {tuple(c.shape)}")
        live = [(o, c.to(o.dtype)) for o, c in pairs if o.requires_grad]
        if live:
            torch.autograd.backward([o for o, _ in live], [c for _, c in live])
        grads = [a.grad if isinstance(a, torch.Tensor) and a.requires_grad else None for a in args]
        return {"out": out, "grads": grads, "param_grads": {n: p.grad for n, p in params.items()}}

    def _op_info(self, request: dict) -> Any:
        obj = self.resolve(request.get("target"))
        info: dict[str, Any] = {"type": qualname(type(obj)), "mro": mro_names(obj),
                                "identity": self.identity(obj), "callable": callable(obj), "len": None}
        if isinstance(obj, (nn.ModuleList, nn.Sequential, nn.ModuleDict, list, tuple, dict, str)):
            info["len"] = len(obj)
        if isinstance(obj, torch.Tensor):
            info.update(requires_grad=bool(obj.requires_grad), grad_fn=obj.grad_fn is not None,
                        device=obj.device.type, dtype=str(obj.dtype).removeprefix("torch."),
                        parameter=isinstance(obj, nn.Parameter))
        if isinstance(obj, nn.Module):
            info["training"] = bool(obj.training)
            info["forbidden"] = rules.forbidden_modules(obj)
        return info

    def _named(self, request: dict, which: str) -> Any:
        obj = self.resolve(request.get("target"))
        if not isinstance(obj, nn.Module):
            raise RequestError("not an nn.Module")
        items = obj.named_parameters() if which == "params" else obj.named_buffers()
        if request.get("values"):
            return [[n, t] for n, t in items]
        return [[n, str(t.dtype).removeprefix("torch."), [int(s) for s in t.shape], t.device.type]
                for n, t in items]

    def _op_params(self, request: dict) -> Any:
        return self._named(request, "params")

    def _op_buffers(self, request: dict) -> Any:
        return self._named(request, "buffers")

    def _op_modules(self, request: dict) -> Any:
        obj = self.resolve(request.get("target"))
        if not isinstance(obj, nn.Module):
            raise RequestError("not an nn.Module")
        return [[n, mro_names(m), self.identity(m)] for n, m in obj.named_modules()]

    def _op_set(self, request: dict) -> Any:
        obj = self.resolve(request.get("target"))
        values = request.get("values")
        if not isinstance(obj, nn.Module) or type(values) is not dict:
            raise RequestError("bad set request")
        own: dict[str, torch.Tensor] = dict(obj.named_parameters())
        own.update(obj.named_buffers())
        with torch.no_grad():
            for name, value in values.items():
                if name not in own:
                    raise KeyError(f"there is no parameter or buffer called {name!r}")
                if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(own[name].shape):
                    raise ValueError(f"{name} has shape {tuple(own[name].shape)}, "
                                     f"not {tuple(getattr(value, 'shape', ()))}")
                own[name].copy_(value)
        return None

    def _op_reset(self, request: dict) -> Any:
        self.objects.clear()
        return None


_MISSING = object()


def _plain_function(obj: Any) -> bool:
    """A function of the notebook whose code a trampoline may take the place of (no closure, not a
    generator or coroutine)."""
    return type(obj) is types.FunctionType and obj.__closure__ is None and obj.__code__ not in _trampolines \
        and not obj.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                                         | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE)


def _probe(obj: Any) -> wire.Ref:
    """A stand-in reference, to try whether a value can be sent (nothing is kept)."""
    return wire.Ref("handle", 0)
_forks = [0]                                    # os.fork()s in this process (DataLoader workers, ...)


def _count_fork() -> None:
    _forks[0] += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_parent=_count_fork)


class _ProcessWatch:
    """Whether the notebook's code had work done in another process while a request ran: a fork
    (a DataLoader worker), a child reaped meanwhile (spawned, ``posix_spawn``-ed, joined: its
    resource use is added to this process's), or, in the grader's process (``own_children``), a
    child still alive afterwards (a pool started by a cell). The work of another process is out of
    the reach of the runtime watch; like it, this lives in the notebook's process, a second signal
    that can only take a point away."""

    def __init__(self, own_children: bool) -> None:
        self.own_children = own_children
        self.forks = _forks[0]
        self.usage = _children_usage()

    def seen(self) -> bool:
        if _forks[0] != self.forks or _children_usage() != self.usage:
            return True
        return self.own_children and _has_children()


def _children_usage() -> tuple:
    try:
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
    except (OSError, ValueError):
        return ()
    return (u.ru_utime, u.ru_stime, u.ru_minflt, u.ru_majflt, u.ru_nvcsw, u.ru_nivcsw, u.ru_maxrss)


def _has_children() -> bool:
    """Whether this process has a child (alive or not yet reaped): one ``waitid`` that neither
    waits nor reaps (it fails with ECHILD only when there is none); from /proc where it cannot tell."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        return True
    except ChildProcessError:
        return False
    except (AttributeError, OSError):
        return _has_children_in_proc()


def _has_children_in_proc() -> bool:
    me = os.getpid()
    try:
        tasks = os.listdir(f"/proc/{me}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{me}/task/{tid}/children", encoding="ascii") as f:
                if f.read().strip():
                    return True
        except OSError:
            continue
    return False


_CELL = re.compile(r"<cell (\d+)>")         # how the grader's runner names a notebook cell it runs


def _where(exc: BaseException) -> list[int] | None:
    """[cell, line] of the innermost frame of the notebook's own code in the traceback of `exc`
    (the grader reads that line from its own copy of the notebook)."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        m = _CELL.fullmatch(tb.tb_frame.f_code.co_filename)
        if m and tb.tb_frame.f_code not in _trampolines:
            found = [int(m.group(1)), int(tb.tb_lineno)]
        tb = tb.tb_next
    return found


def _text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = "(the error could not be shown)"
    return text[:2000]


def _seed(seed: int) -> None:
    """Seed the random numbers for one request from the checking side's ``seed``, so that a check
    is reproducible; ``torch.initial_seed()`` still says what it said before (the notebook's own
    last seed), so that a check's call cannot be told from the notebook's own by it. (The seed torch
    keeps in its state is only reported; the numbers drawn are those of ``seed``.)"""
    own = torch.initial_seed()
    random.seed(seed)
    seed_torch(seed)
    state = torch.get_rng_state()
    state[:8] = torch.frombuffer(bytearray(struct.pack("<Q", own % 2**64)), dtype=torch.uint8)
    torch.set_rng_state(state)
    try:
        import numpy as np
        np.random.seed(seed % 2**32)
    except ImportError:
        pass


def seed_torch(seed: int) -> None:
    """``torch.manual_seed(seed)``. Where torch has no device but the CPU, only the CPU's generator is
    seeded (the same numbers): ``torch.manual_seed`` also queues the seed for a CUDA device not yet
    started, writing down a stack trace each time, which costs about a millisecond per request."""
    if _cpu_only():
        torch.default_generator.manual_seed(seed)
    else:
        torch.manual_seed(seed)


@functools.lru_cache(maxsize=1)
def _cpu_only() -> bool:
    """No CUDA, MPS, XPU, MTIA or custom device in this process (asked once, after the fork)."""
    try:
        others = [torch.cuda.is_available(), torch.backends.mps.is_available(), torch.xpu.is_available(),
                  torch.mtia.is_available(), hasattr(torch, torch._C._get_privateuse1_backend_name())]
    except Exception:
        return False
    return not any(others)


def _rng_state() -> tuple:
    import numpy as np
    return random.getstate(), torch.get_rng_state(), np.random.get_state()


def _set_rng_state(state: tuple) -> None:
    import numpy as np
    random.setstate(state[0])
    torch.set_rng_state(state[1])
    np.random.set_state(state[2])


class _DeviceWatch:
    """Records operations whose tensor arguments live on more than one device."""

    def __init__(self) -> None:
        self.mixed: set[str] = set()
        self._mode: TorchDispatchMode | None = None

    def __enter__(self) -> _DeviceWatch:
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils._pytree import tree_leaves
        watch = self

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                devices = {t.device.type for t in tree_leaves((args, kwargs))
                           if isinstance(t, torch.Tensor) and t.dim() > 0}
                if len(devices) > 1:
                    watch.mixed.add(str(getattr(func, "__name__", func)))
                return func(*args, **kwargs)

        self._mode = _Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._mode is not None:
            self._mode.__exit__(*exc)
            self._mode = None
