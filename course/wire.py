"""What may cross between the grader and a submission's process: plain data, and nothing that runs.

A message is one frame: a 4-byte length, then a JSON header (its own 4-byte length first), then
the raw bytes of the tensors it carries. Values are None, bools, ints, floats, strings, lists,
tuples, dicts with plain keys, tensors (their dtype, shape and bytes), and two kinds of
references: a *handle* (an object that stays in the submission's process) and a *callback* (a
function or module that stays in the grader). Nothing is pickled.

:func:`decode` is written for hostile input: it checks the frame's size, the JSON's depth and
size before parsing it, every type, and that every tensor's bytes match its dtype and shape.
The values it returns are always of the exact built-in types (a ``torch.Tensor``, never a
subclass; a ``float``, never a subclass), so whatever the sender did to its own objects does not
come across. Anything malformed raises :class:`WireError`.

Tensors are real numbers only: dense, strided, on the CPU, of the dtypes in :data:`DTYPES`, at most
:data:`MAX_ELEMENTS` numbers each. A tensor without values (on the ``meta`` device), a sparse, nested
or quantized tensor cannot be sent: the sending side gets a :class:`WireError`, and the receiving
side refuses a frame that claims one.
"""
from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from typing import Any

import torch

MAX_FRAME = 96 * 2**20          # bytes in one message (tensors included)
MAX_HEADER = 8 * 2**20          # bytes of JSON in one message
MAX_DEPTH = 24                  # nesting of lists, tuples and dicts
MAX_NODES = 200_000             # values in one message
MAX_STRING = 2**20              # characters in one string
MAX_INT = 2**63
MAX_ELEMENTS = 2**24            # numbers in one tensor (64 MB in float32)
MAX_SHAPE_ELEMENTS = 2**26      # numbers in one parameter whose shape only is reported

DTYPES = {str(t).removeprefix("torch."): t for t in (
    torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.bool)}


DTYPE_NAMES = {t: name for name, t in DTYPES.items()}
ELEMENT_SIZES = {t: torch.empty((), dtype=t).element_size() for t in DTYPES.values()}
# made once: json.dumps / json.loads with options build a new encoder or decoder at every call
_JSON_OUT = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


class WireError(ValueError):
    """A message that is not well-formed plain data."""


@dataclass(frozen=True)
class Ref:
    """A reference to an object on the other side: ``kind`` is "handle" (in the submission's
    process) or "callback" (in the grader); ``type`` names the object's class, for messages."""

    kind: str
    id: int
    type: str = ""
    callable: bool = False


# ---------------------------------------------------------------- encoding

class _Tuple(list):
    """A tuple on its way into a frame."""


class _Dict(list):
    """A dict on its way into a frame: a list of (key, value) pairs."""


def to_plain(value: Any, refer: Any = None, _depth: int = 0) -> Any:
    """``value`` as plain data: None, bool, int, float, str, tensors, lists, ``_Tuple``, ``_Dict``
    and :class:`Ref`. Objects that are not plain data become ``refer(obj)`` (a :class:`Ref`), or
    raise :class:`WireError` when there is no ``refer``. Subclasses of the built-in types are
    turned into the built-in types (so a ``float`` whose ``__sub__`` lies arrives as a float)."""
    if _depth > MAX_DEPTH:
        raise WireError("too deeply nested")
    kind = type(value)
    if value is None or kind is int or kind is float or kind is str or kind is bool:
        return value                  # already of the exact built-in type (the common case)
    if isinstance(value, (torch.Tensor, Ref, _Tuple, _Dict)):
        return value
    builtin = _as_builtin(value)
    if builtin is not _NOT_PLAIN:
        return builtin
    if type(value).__module__ == "numpy":
        number = _from_numpy(value)
        if number is not _NOT_PLAIN:
            return to_plain(number, refer, _depth)      # a tensor comes back as it is
    # the containers recurse here, in this function (a dict's loop too): one frame per level
    if isinstance(value, dict):
        pairs = _Dict()
        for k, v in dict.items(value):
            key = to_plain(k, None, _depth + 1)
            if isinstance(key, (torch.Tensor, Ref, _Dict)) or type(key) is list:
                raise WireError("a dict key must be a number, a string or a tuple of them")
            pairs.append((key, to_plain(v, refer, _depth + 1)))
        return pairs
    if isinstance(value, tuple):
        return _Tuple(to_plain(v, refer, _depth + 1) for v in tuple.__iter__(value))
    if isinstance(value, list):
        return [to_plain(v, refer, _depth + 1) for v in list.__iter__(value)]
    if refer is None:
        raise WireError(f"cannot send a {type(value).__name__}")
    return refer(value)


_NOT_PLAIN = object()        # what the helpers of to_plain give for a value they do not convert


def _as_builtin(value: Any) -> Any:
    """A subclass of bool, int, float or str as a value of the built-in type (through the built-in
    type's own method: the subclass's are not asked), and torch's sizes, dtypes and devices as
    plain data; :data:`_NOT_PLAIN` for anything else."""
    if isinstance(value, bool):
        return True if value else False
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, torch.Size):
        return _Tuple(int(v) for v in value)
    if isinstance(value, (torch.dtype, torch.device)):
        return str(value)
    return _NOT_PLAIN


def _from_numpy(value: Any) -> Any:
    """A numpy array of real numbers as a tensor (a copy), a numpy number as the Python number
    (:func:`to_plain` makes it plain); :data:`_NOT_PLAIN` for anything else of numpy's."""
    import numpy as np
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return torch.from_numpy(np.ascontiguousarray(value).copy())
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    return _NOT_PLAIN


def encode(message: dict, refer: Any = None, meta: bool = False) -> bytes:
    """One frame holding ``message`` (a dict of values; see :func:`to_plain`). ``meta``: tensors
    without values may go too (only the checks send them, to ask what code does on a device)."""
    blobs: list[bytes] = []

    def tree(v: Any) -> Any:
        kind = type(v)
        if v is None or kind is int or kind is str or kind is bool:
            return v
        if kind is float:
            return v if math.isfinite(v) else {"$float": repr(v)}
        if isinstance(v, torch.Tensor):
            return {"$tensor": _tensor_header(v, blobs, meta)}
        if isinstance(v, Ref):
            return {"$" + v.kind: v.id, "type": v.type, "callable": v.callable}
        if isinstance(v, _Tuple):
            return {"$tuple": [tree(x) for x in v]}
        if isinstance(v, _Dict):
            return {"$dict": [[tree(k), tree(x)] for k, x in v]}
        if isinstance(v, list):
            return [tree(x) for x in v]
        if isinstance(v, float) and not math.isfinite(v):
            return {"$float": repr(v)}
        return v

    header = {str(k): tree(to_plain(v, refer)) for k, v in message.items()}
    head = _JSON_OUT.encode(header).encode()
    body = struct.pack(">I", len(head)) + head + b"".join(blobs)
    if len(body) > MAX_FRAME or len(head) > MAX_HEADER:
        raise WireError(f"message too large ({len(body) // 2**20} MB)")
    return struct.pack(">I", len(body)) + body


def _tensor_header(t: torch.Tensor, blobs: list[bytes], meta: bool = False) -> dict:
    t = torch.Tensor.detach(t)
    if t.device.type == "meta":
        if not meta:
            raise WireError("a tensor without values (on the meta device) is not an answer")
        if t.dtype not in DTYPES.values():
            raise WireError("bad meta tensor")
        return {"dtype": str(t.dtype).removeprefix("torch."), "shape": [int(s) for s in t.shape],
                "device": "meta"}
    if t.layout != torch.strided or t.is_quantized or getattr(t, "is_nested", False):
        raise WireError(f"a {t.layout} tensor is not plain numbers: send a dense tensor")
    if t.numel() > MAX_ELEMENTS:
        raise WireError(f"a tensor of {t.numel():,} numbers is more than {MAX_ELEMENTS:,}")
    if t.dtype not in DTYPE_NAMES:
        t = t.to(torch.float64 if t.is_floating_point() or t.is_complex() else torch.int64)
    head: dict[str, object] = {"dtype": DTYPE_NAMES[t.dtype], "shape": [int(s) for s in t.shape]}
    data = torch.Tensor.contiguous(torch.Tensor.cpu(t))
    raw = data.reshape(-1).view(torch.uint8).numpy().tobytes() if data.numel() else b""
    head["blob"] = len(blobs)
    head["bytes"] = len(raw)
    blobs.append(raw)
    return head


# ---------------------------------------------------------------- decoding

def frame_length(prefix: bytes) -> int:
    """The body length announced by a frame's first 4 bytes (checked against the cap)."""
    (n,) = struct.unpack(">I", prefix)
    if n > MAX_FRAME:
        raise WireError(f"message too large ({n} bytes)")
    return n


def decode(body: bytes, meta: bool = False) -> dict:
    """The message in one frame's body (without its 4-byte length). Raises :class:`WireError`.
    ``meta``: accept tensors without values (the submission's side reading the checks' requests;
    the checks' side never accepts them)."""
    if len(body) < 4 or len(body) > MAX_FRAME:
        raise WireError("truncated or oversized message")
    (n,) = struct.unpack(">I", body[:4])
    if n > MAX_HEADER or 4 + n > len(body):
        raise WireError("bad header length")
    head = body[4:4 + n]
    _check_nesting(head)
    try:
        tree = _JSON_IN.decode(head.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise WireError(f"not JSON: {exc}") from None
    if type(tree) is not dict:
        raise WireError("a message must be a JSON object")
    blobs = memoryview(body)[4 + n:]
    reader = _Reader(blobs, meta)
    out = {}
    for k, v in tree.items():
        out[k] = reader.value(v, 0)
    if reader.offset != len(blobs):
        raise WireError("tensor bytes do not add up")
    return out


def _no_constant(name: str) -> Any:
    raise WireError(f"bare {name} is not allowed")


_JSON_IN = json.JSONDecoder(parse_constant=_no_constant)


def nested_deeper(data: bytes, limit: int) -> bool:
    """Whether JSON text ``data`` opens more than ``limit`` brackets at once, read byte by byte (so
    that a recursion bomb is refused before a parser sees it); brackets inside strings do not count."""
    depth, in_string, escape = 0, False, False
    for b in data:
        if in_string:
            if escape:
                escape = False
            elif b == 0x5C:
                escape = True
            elif b == 0x22:
                in_string = False
        elif b == 0x22:
            in_string = True
        elif b in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif b in (0x5D, 0x7D):
            depth -= 1
    return False


def _check_nesting(head: bytes) -> None:
    """Reject deep nesting before json.loads sees it (a recursion bomb costs nothing to send)."""
    limit = 3 * MAX_DEPTH + 4
    if head.count(b"[") + head.count(b"{") > limit and nested_deeper(head, limit):
        raise WireError("too deeply nested")   # (fewer brackets than the limit cannot nest deeper)


def _scalar(v: Any) -> Any:
    """A JSON value that is not a container, checked: None, a bool, an int in range, a float, a
    string not too long."""
    t = type(v)
    if v is None or t is bool:
        return v
    if t is int:
        if not -MAX_INT <= v < MAX_INT:
            raise WireError("integer out of range")
        return v
    if t is float:
        return v
    if t is str:
        if len(v) > MAX_STRING:
            raise WireError("string too long")
        return v
    raise WireError(f"unexpected {t.__name__}")


def _dict_key(key: Any) -> Any:
    """A dict's key as decoded, checked: None, a str, an int, a float, a bool, or a tuple of str and
    int."""
    if not (key is None or type(key) in (str, int, float, bool, tuple)):
        raise WireError("bad dict key")
    if type(key) is tuple and not all(type(x) in (str, int) for x in key):
        raise WireError("bad dict key")
    return key


class _Reader:
    def __init__(self, blobs: memoryview, meta: bool = False) -> None:
        self.blobs = blobs
        self.meta = meta
        self.offset = 0
        self.nodes = 0
        self.next_blob = 0

    def value(self, v: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise WireError("too many values")
        if depth > MAX_DEPTH:
            raise WireError("too deeply nested")
        t = type(v)
        if t is list:
            return [self.value(x, depth + 1) for x in v]
        if t is not dict or len(v) == 0:
            return _scalar(v)
        # the containers recurse here, in this method (a dict's loop too): one frame per level
        tag = next(iter(v))
        if tag == "$tuple" and len(v) == 1 and type(v[tag]) is list:
            return tuple(self.value(x, depth + 1) for x in v[tag])
        if tag == "$dict" and len(v) == 1 and type(v[tag]) is list:
            out = {}
            for pair in v[tag]:
                if type(pair) is not list or len(pair) != 2:
                    raise WireError("bad dict entry")
                key = _dict_key(self.value(pair[0], depth + 1))
                out[key] = self.value(pair[1], depth + 1)
            return out
        return self.tagged(tag, v)

    def tagged(self, tag: str, v: dict) -> Any:
        """A value JSON has no type for (not a container): a float that is not finite, a tensor, a
        reference."""
        if tag == "$float" and len(v) == 1 and v[tag] in ("nan", "inf", "-inf"):
            return float(v[tag])
        if tag == "$tensor" and len(v) == 1 and type(v[tag]) is dict:
            return self.tensor(v[tag])
        if tag in ("$handle", "$callback") and set(v) == {tag, "type", "callable"}:
            if type(v[tag]) is not int or not 0 <= v[tag] < MAX_INT or type(v["type"]) is not str \
                    or len(v["type"]) > 500 or type(v["callable"]) is not bool:
                raise WireError("bad reference")
            return Ref(tag[1:], v[tag], v["type"], v["callable"])
        raise WireError(f"unknown value {tag[:40]!r}")

    def tensor(self, h: dict) -> torch.Tensor:
        allowed = {"dtype", "shape", "blob", "bytes"} | ({"device"} if self.meta else set())
        if not set(h) <= allowed or type(h.get("dtype")) is not str or h["dtype"] not in DTYPES:
            raise WireError("bad tensor header (only dense CPU tensors of real numbers cross)")
        shape = h.get("shape")
        if type(shape) is not list or len(shape) > 12 \
                or not all(type(s) is int and 0 <= s < 2**40 for s in shape):
            raise WireError("bad tensor shape")
        dtype = DTYPES[h["dtype"]]
        numel = math.prod(shape)
        if "device" in h:
            if h["device"] != "meta" or set(h) != {"dtype", "shape", "device"} or numel > 2**32:
                raise WireError("bad meta tensor")
            return torch.empty(shape, dtype=dtype, device="meta")
        if numel > MAX_ELEMENTS:
            raise WireError(f"a tensor of {numel:,} numbers is more than {MAX_ELEMENTS:,}")
        if h.get("blob") != self.next_blob or type(h.get("bytes")) is not int:
            raise WireError("bad tensor reference")
        self.next_blob += 1
        size = numel * ELEMENT_SIZES[dtype]
        if h["bytes"] != size or self.offset + size > len(self.blobs):
            raise WireError("tensor bytes do not match its shape")
        raw = bytearray(self.blobs[self.offset:self.offset + size])
        self.offset += size
        if size == 0:
            return torch.empty(shape, dtype=dtype)
        return torch.frombuffer(raw, dtype=dtype).reshape(shape)


def has_meta(value: Any, _depth: int = 0) -> bool:
    """Whether a decoded value holds a tensor without values somewhere."""
    if isinstance(value, torch.Tensor):
        return value.device.type == "meta"
    if _depth < MAX_DEPTH + 2 and type(value) in (list, tuple):
        return any(has_meta(v, _depth + 1) for v in value)
    if _depth < MAX_DEPTH + 2 and type(value) is dict:
        return any(has_meta(v, _depth + 1) for v in value.values())
    return False


def dtype_named(name: Any) -> torch.dtype:
    """The dtype a plain string names (one of :data:`DTYPES`); :class:`WireError` otherwise."""
    if type(name) is not str or name not in DTYPES:
        raise WireError(f"not a dtype of the course: {str(name)[:40]!r}")
    return DTYPES[name]
