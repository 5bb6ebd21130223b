"""How the checks reach your code: handles.

Every check starts by wrapping what it tests::

    def test_values(Attention):
        from course.handles import student, close
        Attention = student(Attention)
        out, weights = Attention(q, k, v)          # plain tensors come back
        assert close(weights, expected, atol=1e-5)

``student(x)`` gives plain data (numbers, strings, lists, tensors...) back as plain data, and
anything else (a function, a class, a network) as a :class:`Handle`. A handle does what the
object does, but only through a narrow door: calling it sends the arguments over and brings
the result back as plain data (or as another handle), and the object itself never leaves.

``grader.check`` runs the checks in your own notebook, so the door is only a copy of the
arguments and of the answer. ``course grade`` runs the checks in the grader and your notebook in
a sandbox, and then the door is a pipe between two processes: the checks' expected values and
verdicts never enter your notebook's process, and a check passes only when your code gives the
right answer for inputs it had not seen. The same check code runs both ways.

What a handle offers besides calling it (``net`` a handle to a network):

    net.embed.weight            another handle (nothing is fetched yet)
    net.embed.weight.get()      the value, as plain data
    len(net.blocks), net.blocks[0], for block in net.blocks
    net.info()                  type, base classes, identity, requires_grad, training, ...
    net.type(), net.isa(nn.LayerNorm), net.identity()
    net.params(), net.params(values=False), net.buffers(), net.modules()
    net.set_params({"embed.weight": w})
    net.vjp(x, cotangent=r)     (output, gradients of the inputs, gradients of the parameters)
    with net.swapped(Attention=reference): ...   notebook globals replaced while net runs

and, module-level: ``given("NoTalking")`` (the course's own objects, made on your side),
``watching()`` (which forbidden pieces ran, which operations mixed devices) and
``broken_rules(handle)`` (the page's rules, read from the notebook's code).
"""
from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch

from . import rules, wire

if TYPE_CHECKING:
    import builtins  # Handle.type hides the built-in type in the class's body

GIVEN_MARK = "# GIVEN"              # the first line of every GIVEN cell (the course's code)
SETUP_MARK = "# GIVEN: setup."   # the first line of every notebook's setup cell after its Colab title
# Colab's form title, the setup cell's first line (instructor/build.py; autograder/notebook.py reads it too)
_COLAB_TITLE = re.compile(r"[ \t]*#@title\b[^\n]*(?:\n|$)")
# the cell otter's executor puts first in a notebook it runs (otter/execute/preprocessor.py)
_OTTER_CELL = re.compile(r'import sys\nsys\.path\.append\(r"[^"\n]*"\)\n?')
# nbgrader's test cells (instructor/nbgrader/source.py writes them): the course's tests, run in place
_NBGRADER_TEST = re.compile(r"# test q\w+[ :][^\n]*\n(### BEGIN HIDDEN TESTS\n)?"
                            r"from course\.nbgrader_check import check\n")
_MASTER_TEST = '""" # BEGIN TEST CONFIG'   # a test cell of a master notebook (course solutions runs them)
RESERVED = {"get", "info", "type", "isa", "identity", "params", "buffers", "modules", "set_params",
            "vjp", "swapped", "name", "describe"}


class StudentError(Exception):
    """The student's code raised (the message says what it raised), or its answer was not usable.
    `line`: the line of the notebook where it raised, as the grader read the notebook (or None)."""

    line: str | None = None

    def student_text(self) -> str:
        """The error as a student should read it in a check's message."""
        text = str(self)
        kind, sep, rest = text.partition(": ")
        if kind == "GivenPieceError" and sep:
            return rest[:1500]
        if sep and kind.isidentifier() and kind[:1].isupper():
            return f"your code raised {kind}: {rest}"[:1500]
        return text[:1500]


class StudentTimeout(StudentError):
    """The student's code ran over the time limit of the check."""


# ---------------------------------------------------------------- transports

class Transport:
    """Carries requests to a :class:`course.serve.Server` and brings the answers back."""

    def __init__(self) -> None:
        self.callbacks: dict[int, Any] = {}
        self.built: set[int] = set()          # callbacks a stand-in built (they live as long as a check)
        self._next_callback = 1
        self.swaps: dict[str, Any] = {}
        self.watches: list[Watching] = []
        self.runtime_forbidden: dict[str, set[str]] = {}
        self.meta_ok = False

    # -- to implement
    def exchange(self, frame: bytes) -> dict:
        """Send one request frame; return the decoded answer (callbacks handled on the way)."""
        raise NotImplementedError

    def cells(self, obj: Any = None) -> list[str]:
        """The notebook's code cells, for the rules."""
        raise NotImplementedError

    def template(self) -> list[str] | None:
        """The blank notebook's code cells, when known (the grader knows them)."""
        return None

    def line_of(self, cell: int, line: int) -> str | None:
        """Line `line` of the notebook's cell `cell`, as the checking side read the notebook
        (None where it did not)."""
        return None

    # -- shared
    def refer(self, obj: Any) -> wire.Ref:
        """Objects of the checking side that go over: callbacks (functions and networks)."""
        if isinstance(obj, Handle):
            raise wire.WireError("internal: handles are sent as references")
        if not callable(obj):
            raise wire.WireError(f"cannot send a {type(obj).__name__}")
        ref_id = self._next_callback          # never reused: a stand-in kept from an earlier
        self._next_callback += 1              # request reaches nothing later
        self.callbacks[ref_id] = obj
        # the kind, and the name the student's side gives its stand-in (an ordinary notebook name)
        if isinstance(obj, torch.nn.Module):
            kind, name = "module", type(obj).__name__
        else:
            kind, name = "function", getattr(obj, "__name__", "")
        name = name if type(name) is str and name.isidentifier() else ""
        return wire.Ref("callback", ref_id, f"{kind}:{name[:100]}", True)

    def answer_callback(self, message: dict) -> bytes:
        """The frame answering a callback request from the student's side. When the checking
        side's piece fails (the student's code called it with arguments it does not take, say),
        the error says so in the student's words, naming the piece as the notebook knows it."""
        ref = message.get("callback")
        fn = self.callbacks.get(ref) if type(ref) is int else None
        try:
            if fn is None:
                raise StudentError("unknown callback")
            args, kwargs = message.get("args") or [], message.get("kwargs") or {}
            args = [self.wrap(a) for a in args] if type(args) is list else []
            kwargs = {k: self.wrap(v) for k, v in kwargs.items()} if type(kwargs) is dict else {}
            return wire.encode({"value": fn(*args, **kwargs)}, self._built, meta=self.meta_ok)
        except Exception as exc:
            return wire.encode({"error": {"type": "GivenPieceError",
                                          "message": _given_piece_failed(fn, self.swaps, args, kwargs, exc)}})

    def _built(self, obj: Any) -> wire.Ref:
        """A piece a checking-side stand-in returned to the student's code (``SelfAttention(cfg)``
        built by a stand-in class): it stays reachable after the request that built it, until the
        check ends (the judge clears the callbacks after every check)."""
        ref = self.refer(obj)
        self.built.add(ref.id)
        return ref

    def request(self, op: str, root: str = "", **fields: Any) -> Any:
        """Send one request; return its value (handles wrapped), or raise StudentError."""
        fields = {k: (self._ref_of(v) if isinstance(v, Handle) else v) for k, v in fields.items()}
        message = {"op": op, **fields}
        if self.swaps:
            message["swap"] = dict(self.swaps)
        if self.watches:
            message["watch"] = ["devices"]
        before = set(self.callbacks)
        message = _deep(message, self._ref_of)
        frame = wire.encode(message, self.refer, meta=True)
        # tensors without values travel only where the check itself sent some (to ask what code
        # does on another device): then the check's own pieces may be handed such tensors too
        outer, self.meta_ok = self.meta_ok, self.meta_ok or wire.has_meta(message)
        try:
            answer = self.exchange(frame)
        finally:                              # callbacks live for the one request that sent them
            self.meta_ok = outer
            for ref_id in set(self.callbacks) - before - self.built:
                del self.callbacks[ref_id]
        if type(answer) is not dict:
            raise StudentError("the answer is not a message")
        if wire.has_meta(answer):             # never an answer: it has no numbers to check
            raise StudentError("WireError: the answer holds a tensor without values (on the meta device)")
        forbidden = answer.get("forbidden") or []
        mixed = answer.get("mixed_devices") or []
        if type(forbidden) is not list or type(mixed) is not list:
            raise StudentError("malformed answer")
        if forbidden:
            self.runtime_forbidden.setdefault(root, set()).update(str(f)[:100] for f in forbidden[:20])
        for w in self.watches:
            w.forbidden.update(str(f)[:100] for f in forbidden[:20])
            w.mixed_devices.update(str(m)[:100] for m in mixed[:20])
        if "error" in answer:
            err = answer["error"]
            if type(err) is not dict:
                raise StudentError("malformed answer")
            kind, text = str(err.get("type", "Error"))[:100], str(err.get("message", ""))[:2000]
            if kind == "Timeout":
                raise StudentTimeout(text)
            error = StudentError(f"{kind}: {text}" if text else kind)
            where = err.get("where")
            if type(where) is list and len(where) == 2 and all(type(n) is int for n in where):
                error.line = self.line_of(where[0], where[1])
            raise error
        if "value" not in answer:
            raise StudentError("malformed answer")
        return self.wrap(answer["value"], root)

    def lookup(self, names: list[str], reset: bool = False) -> tuple[dict[str, Any], list[str]]:
        """Several notebook names in one request, as ``request("global", name, name=name)`` gives
        each (plain data, or a handle rooted at that name), and the names that are not there (or
        could not be sent); with ``reset``, every handle given out before is forgotten first (the
        last check's). Raises StudentError when the request as a whole fails."""
        answer = self.request("globals", names=list(names), reset=reset)
        if type(answer) is not dict or type(answer.get("found")) is not dict \
                or type(answer.get("missing")) is not list:
            raise StudentError("malformed answer")
        found = {n: _rooted(v, n) for n, v in answer["found"].items() if n in names}
        missing = [n for n in answer["missing"] if n in names]
        if set(found) | set(missing) != set(names):
            raise StudentError("malformed answer")
        return found, missing

    def wrap(self, value: Any, root: str = "") -> Any:
        if isinstance(value, wire.Ref):
            if value.kind != "handle":
                raise StudentError("malformed answer: a callback came back")
            return Handle(self, value, (), root)
        if type(value) is list:
            return [self.wrap(v, root) for v in value]
        if type(value) is tuple:
            return tuple(self.wrap(v, root) for v in value)
        if type(value) is dict:
            return {k: self.wrap(v, root) for k, v in value.items()}
        return value

    def _ref_of(self, h: Handle) -> Any:
        if not h._path:
            return h._ref
        return self.request("get", h._root, target=h._target())._ref


def _given(source: str) -> bool:
    """Whether a cell's source is a GIVEN cell: GIVEN_MARK first, after a Colab title if it has one."""
    source = source.lstrip()
    title = _COLAB_TITLE.match(source)
    return (source[title.end():].lstrip() if title else source).startswith(GIVEN_MARK)


def _given_piece_failed(fn: Any, swaps: dict, args: Any, kwargs: Any, exc: Exception) -> str:
    """What to tell a student whose code called a piece the check put in place of a notebook name
    (this week's given ``Attention``, say), and that piece failed."""
    import inspect
    name = next((n for n, f in swaps.items() if f is fn), None)
    if name is None:
        name = "the function the check handed to your code"
    text = str(exc)[:300]
    for own in (getattr(fn, "__qualname__", ""), getattr(fn, "__name__", "")):   # longest first
        if own and type(own) is str:
            text = text.replace(own, name)
    try:
        signature = str(inspect.signature(fn))
    except (TypeError, ValueError):
        signature = "(...)"
    called = ", ".join(["..."] * (len(args) if type(args) is list else 0)
                       + [f"{k}=..." for k in (kwargs if type(kwargs) is dict else {})])
    if isinstance(exc, TypeError):
        return (f"your code called {name}({called}), but the {name} this check uses is "
                f"{name}{signature}: {text}")
    return f"your code called {name}({called}) and it failed with {type(exc).__name__}: {text}"


def _rooted(value: Any, root: str) -> Any:
    """``value`` with its handles named after the notebook name ``root`` (see :meth:`Handle.name`)."""
    if isinstance(value, Handle):
        return Handle(value._t, value._ref, value._path, root)
    if type(value) in (list, tuple):
        return type(value)(_rooted(v, root) for v in value)
    if type(value) is dict:
        return {k: _rooted(v, root) for k, v in value.items()}
    return value


def _deep(value: Any, ref_of: Any) -> Any:
    """Handles inside a request's values become references."""
    if isinstance(value, Handle):
        return ref_of(value)
    if type(value) in (list, tuple):
        return type(value)(_deep(v, ref_of) for v in value)
    if type(value) is dict:
        return {k: _deep(v, ref_of) for k, v in value.items()}
    return value


class LocalTransport(Transport):
    """The checks and the notebook in one process (``grader.check``, Otter on Gradescope, nbgrader):
    requests go to a server over the same encoding, without a pipe."""

    def __init__(self, env: dict) -> None:
        super().__init__()
        from .serve import Server
        self.env = env
        self.server = Server(env, call_back=self._call_back, isolate_rng=True)

    def exchange(self, frame: bytes) -> dict:
        answer = self.server.handle(wire.decode(frame[4:], meta=True))
        try:
            return wire.decode(wire.encode(answer, self.server.refer)[4:], meta=self.meta_ok)
        except wire.WireError as exc:
            return {"error": {"type": "WireError", "message": f"the answer could not be sent: {exc}"}}

    def _call_back(self, ref: wire.Ref, args: tuple, kwargs: dict) -> Any:
        from .serve import GivenPieceError, callback_frame
        try:
            message = wire.decode(callback_frame(ref, args, kwargs, self.server.refer)[4:], meta=self.meta_ok)
        except wire.WireError as exc:
            raise GivenPieceError(f"your code handed the given piece something that is not plain "
                                  f"numbers: {exc}") from None
        answer = wire.decode(self.answer_callback(message)[4:], meta=True)
        if "error" in answer:
            raise GivenPieceError(str(answer["error"].get("message", ""))[:1000])
        return self.server._inflate(answer.get("value"))

    def template(self) -> list[str] | None:
        """In the student's own process the blank notebook is not at hand; its GIVEN cells are
        known by their first line (the setup cell's after its Colab title), and are the course's
        (the setup cell uses sys and pip to find and install the course, which a notebook's own
        code may not), and so is the cell otter's executor puts first (nbgrader's test cells are
        left out of :meth:`cells`). A graded definition in such a cell is still no answer (it
        counts as the blank template). Only self-checks run here (and, until they go through the
        judge, Gradescope and nbgrader): the judge reads the real blank notebook."""
        return [c for c in self.cells() if _given(c) or _OTTER_CELL.fullmatch(c)]

    def cells(self, obj: Any = None) -> list[str]:
        history = self.env.get("In")
        if isinstance(history, list) and any(isinstance(c, str) and c.strip() for c in history):
            # nbgrader's test cells and a master notebook's are the tests, not the notebook's code
            return [c for c in history if isinstance(c, str) and not _NBGRADER_TEST.match(c)
                    and not c.lstrip().startswith(_MASTER_TEST)]
        import inspect
        try:
            return [inspect.getsource(obj)] if obj is not None else []
        except (OSError, TypeError):
            return []


_transport: Transport | None = None


def use(transport: Transport | None) -> None:
    """Make ``transport`` the one ``student()`` and friends use (the grader's judge calls this)."""
    global _transport
    _transport = transport


def _notebook_env() -> dict:
    try:
        from IPython import get_ipython
        shell = get_ipython()
        if shell is not None:
            return shell.user_ns
    except ImportError:
        pass
    import __main__
    return vars(__main__)


def transport() -> Transport:
    global _transport
    if _transport is None:
        _transport = LocalTransport(_notebook_env())
    return _transport


# ---------------------------------------------------------------- handles

class Handle:
    """An object in the notebook, reached through requests (see the module's docstring)."""

    __slots__ = ("_t", "_ref", "_path", "_root")
    _t: Transport
    _ref: wire.Ref
    _path: tuple
    _root: str

    def __init__(self, t: Transport, ref: wire.Ref, path: tuple = (), root: str = "") -> None:
        object.__setattr__(self, "_t", t)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_path", tuple(path))
        object.__setattr__(self, "_root", root)

    def _target(self) -> list:
        return [self._ref, *self._path]

    def _ask(self, op: str, **fields: Any) -> Any:
        return self._t.request(op, self._root, target=self._target(), **fields)

    @property
    def name(self) -> str:
        """Where this handle points, for messages: ``net.blocks.0.attention``."""
        return ".".join([self._root or "object", *map(str, self._path)])

    def __getattr__(self, attr: str) -> Handle:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return Handle(self._t, self._ref, self._path + (attr,), self._root)

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError("handles are read-only: use set_params")

    def __getitem__(self, key: int | str) -> Handle:
        if type(key) not in (int, str):
            raise TypeError("a handle is indexed by an int or a str")
        return Handle(self._t, self._ref, self._path + (key,), self._root)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._ask("call", args=list(args), kwargs=kwargs, seed=_draw_seed())

    def __len__(self) -> int:
        n = self.info()["len"]
        if type(n) is not int or n < 0:
            raise StudentError(f"{self.name} has no length")
        return n

    def __iter__(self) -> Iterator[Handle]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<handle to {self.name}: {self._ref.type}>"

    # -- requests
    def get(self) -> Any:
        """The value here as plain data (a StudentError when it is not plain data)."""
        value = self._ask("get")
        if isinstance(value, Handle):
            raise StudentError(f"{self.name} is a {value._ref.type}, not a plain value")
        return value

    def info(self) -> dict:
        info = self._ask("info")
        if type(info) is not dict or type(info.get("mro")) is not list:
            raise StudentError("malformed answer")
        return info

    def type(self) -> str:
        return str(self.info()["type"])

    def isa(self, cls: builtins.type) -> bool:
        """isinstance(object, cls), for a class of torch (judged by the class's full name)."""
        return f"{cls.__module__}.{cls.__qualname__}" in self.info()["mro"]

    def identity(self) -> int:
        return self.info()["identity"]

    def params(self, values: bool = True) -> dict[str, Any]:
        """named_parameters() (each shared tensor once), as {name: tensor}; with values=False
        only their shapes, as {name: :class:`Shape`} (capped: a check never allocates what a
        student reports)."""
        items = self._ask("params", values=values)
        return _named(items) if values else _shapes(items)

    def buffers(self, values: bool = True) -> dict[str, Any]:
        items = self._ask("buffers", values=values)
        return _named(items) if values else _shapes(items)

    def describe(self, *args: Any, **kwargs: Any) -> Any:
        """Call, and bring back only a description of the result (for a tensor: its device, dtype,
        shape and requires_grad; lists and tuples item by item): how a check asks what code does on
        another device, whose tensors have no values to send."""
        return self._ask("describe", args=list(args), kwargs=kwargs, seed=_draw_seed())

    def modules(self) -> dict[str, list[str]]:
        """named_modules(): {path: the class and its base classes, by full name}."""
        items = self._ask("modules")
        if type(items) is not list:
            raise StudentError("malformed answer")
        return {str(n): list(m) for n, m, _ in items}

    def set_params(self, values: dict[str, torch.Tensor]) -> None:
        self._ask("set", values=values)

    def vjp(self, *args: Any, cotangent: Any, **kwargs: Any) -> tuple:
        """Call with gradients on, then backward with ``cotangent`` (shaped like the output; None
        for outputs to leave out). Returns (output, gradients of the tensor arguments (None where
        none arrived), gradients of the parameters {name: tensor or None})."""
        res = self._ask("vjp", args=list(args), kwargs=kwargs, cotangent=cotangent, seed=_draw_seed())
        if type(res) is not dict or not {"out", "grads", "param_grads"} <= set(res):
            raise StudentError("malformed answer")
        return res["out"], res["grads"], res["param_grads"]

    @contextlib.contextmanager
    def swapped(self, **names: Any) -> Iterator[None]:
        """While inside, the notebook's globals ``names`` are replaced by these functions (they run
        on the checking side), for every request."""
        old = dict(self._t.swaps)
        self._t.swaps.update(names)
        try:
            yield
        finally:
            self._t.swaps.clear()
            self._t.swaps.update(old)


def _named(items: Any) -> dict:
    if type(items) is not list or len(items) > MAX_PARAMETERS or \
            not all(type(i) is list and len(i) == 2 and type(i[0]) is str for i in items):
        raise StudentError("malformed answer")
    return {n: t for n, t in items}


MAX_PARAMETERS = 10_000                  # named tensors in one answer
MAX_SHAPE_NUMBERS = 2**22                # numbers in one parameter whose shape a check may use
MAX_SHAPES_NUMBERS = 2**24               # ... and in all of them together


class Shape:
    """A parameter's shape, dtype and device, without its values (``params(values=False)``)."""

    __slots__ = ("shape", "dtype", "device")

    def __init__(self, shape: tuple, dtype: torch.dtype, device: str) -> None:
        self.shape = torch.Size(shape)
        self.dtype = dtype
        self.device = torch.device(device)

    def numel(self) -> int:
        return self.shape.numel()

    def dim(self) -> int:
        return len(self.shape)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def __repr__(self) -> str:
        return f"Shape({tuple(self.shape)}, {self.dtype}, {self.device.type})"


def _shapes(items: Any) -> dict[str, Shape]:
    """{name: Shape} from a shapes-only answer, checked and capped before anyone allocates."""
    if type(items) is not list or len(items) > MAX_PARAMETERS:
        raise StudentError("malformed answer")
    out: dict[str, Shape] = {}
    total = 0
    for item in items:
        if type(item) is not list or len(item) != 4 or type(item[0]) is not str \
                or type(item[2]) is not list or len(item[2]) > 12 \
                or not all(type(n) is int and 0 <= n < 2**40 for n in item[2]) \
                or item[3] not in ("cpu", "cuda", "mps", "meta"):
            raise StudentError("malformed answer")
        try:
            dtype = wire.dtype_named(item[1])
        except wire.WireError as exc:
            raise StudentError(f"{item[0]}: {exc}") from None
        numel = math.prod(item[2])
        total += numel
        if numel > MAX_SHAPE_NUMBERS or total > MAX_SHAPES_NUMBERS:
            raise StudentError(f"the network reports a parameter {item[0][:80]} of {numel:,} numbers "
                               f"({total:,} so far): more than any network of this course has")
        out[item[0]] = Shape(tuple(item[2]), dtype, item[3])
    return out


def _draw_seed() -> int:
    """The seed for the student's side of one request, drawn from the check's own random numbers
    (so a check is as reproducible as its own torch.manual_seed)."""
    return int(torch.randint(0, 2**31 - 1, ()).item())


# ---------------------------------------------------------------- what checks import

def student(value: Any) -> Any:
    """The check's view of a notebook name: plain data as plain data, anything else as a handle."""
    if isinstance(value, Handle):
        return value
    t = transport()
    try:
        plain = wire.to_plain(value)
    except wire.WireError:
        plain = None
    else:
        return wire.decode(wire.encode({"v": plain})[4:])["v"]
    if isinstance(t, LocalTransport):
        ref = t.server.refer(value)
        name = getattr(value, "__name__", "") if isinstance(getattr(value, "__name__", ""), str) else ""
        return Handle(t, ref, (), name)
    raise StudentError(f"not a notebook object: {type(value).__name__}")  # pragma: no cover


def given(name: str) -> Handle:
    """One of the course's own objects (``NoTalking``, ``stories.GetBatch``), made on the student's
    side, so that student code can be handed it."""
    h = transport().request("given", name.rpartition(".")[2], name=name)
    if not isinstance(h, Handle):
        raise StudentError(f"course.{name} is not an object")
    return h


class Watching:
    """What ran during the requests made inside ``with watching() as seen:``."""

    def __init__(self) -> None:
        self.forbidden: set[str] = set()
        self.mixed_devices: set[str] = set()


@contextlib.contextmanager
def watching() -> Iterator[Watching]:
    t = transport()
    w = Watching()
    t.watches.append(w)
    try:
        yield w
    finally:
        t.watches.remove(w)


def broken_rules(*handles: Handle) -> list[str]:
    """The page's rules, for the notebook definitions behind ``handles``: what the notebook's code
    does against them (read statically) and what forbidden pieces ran while they were called."""
    t = transport()
    roots = [h._root for h in handles if isinstance(h, Handle) and h._root]
    first = None
    if isinstance(t, LocalTransport) and handles:
        first = t.server.objects.get(handles[0]._ref.id)
    found = rules.static_uses(t.cells(first), roots, t.template())
    for r in roots:
        found += [f"ran {f}" for f in sorted(t.runtime_forbidden.get(r, ()))]
    for h in handles:
        try:
            found += [str(x) for x in (h.info().get("forbidden") or [])]
        except StudentError:
            pass
    return list(dict.fromkeys(found))


def close(got: Any, want: torch.Tensor, atol: float = 1e-5, rtol: float = 1e-5) -> bool:
    """True when ``got`` is a tensor of exactly ``want``'s shape whose values are allclose to it
    (NaN nowhere unless it is in ``want`` too). Never broadcasts."""
    if type(got) is not torch.Tensor or type(want) is not torch.Tensor:
        return False
    for t in (got, want):                 # plain numbers only: nothing without values to compare
        if t.device.type != "cpu" or t.layout != torch.strided:
            return False
    if tuple(got.shape) != tuple(want.shape):
        return False
    if got.is_floating_point() != want.is_floating_point() and got.dtype != torch.bool:
        got = got.to(want.dtype)
    return bool(torch.allclose(got.to(torch.float64), want.to(torch.float64), atol=atol, rtol=rtol,
                               equal_nan=True))


def number(value: Any) -> float:
    """A plain number from an answer (an int, a float, or a tensor with one element); a
    StudentError otherwise."""
    if type(value) in (int, float):
        return float(value)
    if type(value) is torch.Tensor and value.numel() == 1 and value.device.type == "cpu":
        return float(value.reshape(()).item())
    raise StudentError(f"expected a number, got {type(value).__name__}")


__all__ = ["student", "given", "watching", "broken_rules", "close", "number", "Handle", "Shape",
           "StudentError", "StudentTimeout"]
