"""What a submission's process may say to the grader, checked field by field.

The submission's process writes JSON lines on its message pipe: that it is ready, which cell it
is running, the figures its cells drew (base64 PNG, one per message, for the hand-grading pages),
that its cells are done (with the errors they raised, their output, where each cell's output starts
and its own tamper check), and, after the tests, its last tamper check. All of it is untrusted: the student's
code runs in that process and can write anything to the pipe. :func:`parse_submission` accepts a
line only when it is one of these messages with fields of exactly the right types and sizes;
anything else raises :class:`Malformed`, which costs that submission its row (never the batch).
None of these messages can earn a point: points come only from the judge.
"""
from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

MAX_LINE = 1 << 20
ERROR_KINDS = {"error", "timeout", "exit", "memory"}


class Malformed(ValueError):
    """A message that is not one the runner sends."""


def _depth_ok(line: bytes, limit: int = 8) -> bool:
    # course.wire.nested_deeper reads the same way; this copy keeps the grader's own process free
    # of the student package (and so of torch: course/ imports it)
    depth, in_string, escape = 0, False, False
    for b in line:
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
                return False
        elif b in (0x5D, 0x7D):
            depth -= 1
    return True


def _str(v: Any, cap: int, what: str) -> str:
    if type(v) is not str:
        raise Malformed(f"{what} is not text")
    return v[:cap].encode("utf-8", "replace").decode("utf-8")     # no lone surrogates past here


def _int(v: Any, what: str) -> int:
    if type(v) is not int or not 0 <= v < 2**31:
        raise Malformed(f"{what} is not a cell number")
    return v


def _strings(v: Any, what: str, n: int = 20, cap: int = 300) -> list[str]:
    if type(v) is not list or len(v) > 1000:
        raise Malformed(f"{what} is not a list of text")
    return [_str(x, cap, what) for x in v][:n]


def _png(v: Any) -> bytes:
    """A figure: base64 text of at most FIGURE_B64 characters, decoded (empty: none, see its note).
    Whether the bytes are a PNG is the grader's check (a bad image is dropped, not fatal)."""
    if type(v) is not str or len(v) > FIGURE_B64:
        raise Malformed("a figure that is not base64 text of the allowed size")
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        raise Malformed("a figure that is not base64 text of the allowed size") from None


def _marks(v: Any) -> list[list[int]]:
    if type(v) is not list or len(v) > 2000:
        raise Malformed("marks is not a list of cell offsets")
    out = []
    for m in v:
        if type(m) is not list or len(m) != 2:
            raise Malformed("marks is not a list of cell offsets")
        out.append([_int(m[0], "marks"), _int(m[1], "marks")])
    return out


FIGURE_B64 = 4 * (600 * 1024) // 3 + 4          # runner.FIGURE_BYTES, as base64

SCHEMAS = {
    "ready": {},
    "fatal": {"reason": "reason", "traceback": "?traceback"},
    "unreadable": {"reason": "reason"},
    "cell": {"i": "cell"},
    "figure": {"cell": "cell", "png": "png", "note": "?note"},
    "cells_done": {"errors": "errors", "output": "output", "tamper": "tamper", "marks": "?marks"},
    "done": {"tamper": "tamper"},
}


def parse_submission(line: bytes) -> dict:
    """One message from a submission's process, checked; raises :class:`Malformed`."""
    msg = _message(line)
    kind = msg["t"]
    out: dict[str, Any] = {"t": kind}
    for key, rule in SCHEMAS[kind].items():
        if key not in msg:
            if rule.startswith("?"):          # an optional field
                continue
            raise Malformed(f"a {kind!r} message without {key!r}")
        out[key] = _FIELDS[rule](msg[key], key)
    return out


def _message(line: bytes) -> dict:
    """The line as JSON, checked before it is parsed (its size, its nesting) and after: an object of
    a known kind (its ``t``) with only the fields that kind has."""
    if len(line) > MAX_LINE:
        raise Malformed("a message too long")
    if not _depth_ok(line):
        raise Malformed("a message nested too deeply")
    try:
        msg = json.loads(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise Malformed("a message that is not JSON") from None
    if type(msg) is not dict or type(msg.get("t")) is not str:
        raise Malformed("a message without a kind")
    kind = msg["t"]
    if kind not in SCHEMAS:
        raise Malformed(f"an unknown message {kind[:30]!r}")
    if set(msg) - ({"t"} | set(SCHEMAS[kind])):
        raise Malformed(f"unknown fields in a {kind!r} message")
    return msg


def _errors(v: Any, key: str) -> list[dict]:
    """The errors the cells stopped with: the first 200, each checked."""
    if type(v) is not list or len(v) > 10_000:
        raise Malformed("errors is not a list")
    errors = []
    for e in v[:200]:
        if type(e) is not dict or set(e) != {"cell", "kind", "error"} or e["kind"] not in ERROR_KINDS:
            raise Malformed("a malformed cell error")
        errors.append({"cell": _int(e["cell"], "cell"), "kind": e["kind"],
                       "error": _str(e["error"], 600, "error")})
    return errors


# how each rule of SCHEMAS reads its field (the value, the field's name)
_FIELDS: dict[str, Callable[[Any, str], Any]] = {
    "reason": lambda v, key: _str(v, 300, key),
    "?traceback": lambda v, key: _str(v, 2000, key),
    "?note": lambda v, key: _str(v, 200, key),
    "png": lambda v, key: _png(v),
    "?marks": lambda v, key: _marks(v),
    "cell": _int,
    "output": lambda v, key: _str(v, 70_000, key),
    "tamper": lambda v, key: _strings(v, key),
    "errors": _errors,
}
