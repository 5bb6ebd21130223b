"""What the grader reads in a submitted notebook without running it: which week's notebook it is,
and the answers to the questions graded by hand.

``course grade`` starts this module as a process of its own (``python -m autograder.notebook_info``)
beside the fork server, hands it the batch's staged notebooks, and gets one small JSON document per
notebook back in its private staging folder. It parses untrusted JSON, so it runs under a memory
cap, apart from the grader; it never runs anything a notebook holds.

*Which notebook.* A notebook made by ``course build`` says which it is in three places: its
metadata (``otter.assignment_name``), its setup cell (``NOTEBOOK = "02_with_position"``) and its
cell ids (``02-012``). A notebook that names another week in any of them, and this week in none,
and that holds next to none of this week's given code cells, is another week's notebook: it is
not run, and its row says so. A notebook that says nothing (an old one, a toy) is graded.

*Manual answers.* Otter assign wraps each question graded by hand (``manual: true``) in
``<!-- BEGIN QUESTION -->`` ... ``<!-- END QUESTION -->`` markdown comments: the prompt cell opens
the block, and the cells up to the closing comment are the student's answer. For each such cell
this keeps its markdown or code and, for a code cell the grader skips (``otter_ignore``: training
runs), the outputs saved in the file: text, and PNG images only after :func:`check_png` accepted
them. Text is shown as it last stood: a line a progress bar rewrote with carriage returns shows its
last state, and a progress bar shown as a widget (tqdm's in Jupyter) shows the text of its last
state as the notebook saved it (its widget state), else the text it was first shown with. Figures
of the cells the grader runs are drawn while it runs them (:mod:`autograder.runner`).
"""
from __future__ import annotations

import base64
import binascii
import html
import json
import os
import re
import struct
import sys
import zlib
from typing import Any, cast

MAX_NOTEBOOK_BYTES = 64 * 2**20        # larger notebooks are graded, not inspected
MAX_NOTEBOOK_CELLS = 5_000             # so are notebooks of more cells (the course's have < 200)
MAX_SOURCE = 20_000                    # characters of one answer cell
MAX_CELLS = 30                         # answer cells of one question
MAX_TEXT = 6_000                       # saved text output of one cell
MAX_SAVED_IMAGES_PER_CELL = 6
MAX_SAVED_IMAGES = 24
MAX_SAVED_IMAGE_BYTES = 2 * 2**20
MAX_SAVED_BYTES = 12 * 2**20
PNG_MAX_SIDE = 8000
PNG_MAX_PIXELS = 16_000_000

BEGIN = "<!-- BEGIN QUESTION -->"
END = "<!-- END QUESTION -->"
NOTEBOOK_LINE = re.compile(r"""^NOTEBOOK\s*=\s*["']([A-Za-z0-9_.\-]{1,100})["']""", re.MULTILINE)
CELL_ID = re.compile(r"^(\d\d)-\d{3}$")
NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,100}$")
QUESTION_NUMBER = re.compile(r"\*\*(?:Question\s+(\d+)\b|q(\d+)\b)")
UNANSWERED = "_Type your answer here"


# ---------------------------------------------------------------- PNG images

def check_png(data: bytes, max_bytes: int = MAX_SAVED_IMAGE_BYTES) -> str | None:
    """Why ``data`` is not a PNG image we are willing to show (None when it is one): the signature,
    a first IHDR chunk of sane size, every chunk's length and CRC, and an IEND at the very end."""
    if len(data) > max_bytes:
        return f"an image of {len(data) // 1024} KB (at most {max_bytes // 1024} KB)"
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "not a PNG image"
    pos, first, ended = 8, True, False
    while pos < len(data):
        if ended or pos + 12 > len(data):
            return "a PNG image with bytes after its end or a cut-off chunk"
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if length > len(data) - pos - 12:
            return "a PNG image with a cut-off chunk"
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) != crc:
            return "a PNG image with a bad checksum"
        if first:
            if kind != b"IHDR" or length != 13:
                return "a PNG image without a header"
            width, height = struct.unpack(">II", body[:8])
            if not (0 < width <= PNG_MAX_SIDE and 0 < height <= PNG_MAX_SIDE) \
                    or width * height > PNG_MAX_PIXELS:
                return f"a PNG image of {width} x {height} pixels (too large)"
            first = False
        ended = kind == b"IEND"
        pos += 12 + length
    return None if ended else "a PNG image without its end"


def png_b64(text: Any, max_bytes: int = MAX_SAVED_IMAGE_BYTES) -> tuple[str | None, str | None]:
    """A base64 PNG as a notebook stores it (a string or a list of lines): (normalised base64, None)
    when it is a PNG, else (None, why not)."""
    if isinstance(text, list) and all(isinstance(t, str) for t in text):
        text = "".join(text)
    if not isinstance(text, str):
        return None, "an image that is not text"
    if len(text) > max_bytes * 4 // 3 + 4096:
        return None, f"an image of over {max_bytes // 1024} KB"
    try:
        data = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return None, "an image that is not base64"
    problem = check_png(data, max_bytes)
    if problem:
        return None, problem
    return base64.b64encode(data).decode("ascii"), None


# ---------------------------------------------------------------- reading a notebook

def _text(v: Any) -> str:
    if isinstance(v, list):
        return "".join(x for x in v if isinstance(x, str))
    return v if isinstance(v, str) else ""


def _cells(nb: Any) -> list[dict]:
    cells = nb.get("cells") if isinstance(nb, dict) else None
    return [c if isinstance(c, dict) else {} for c in cells] if isinstance(cells, list) else []


def _tags(cell: dict) -> list:
    meta = cast(dict, cell.get("metadata")) if isinstance(cell.get("metadata"), dict) else {}
    tags = meta.get("tags")
    return tags if isinstance(tags, list) else []


def identity(nb: Any) -> list[str]:
    """The notebook names the file itself claims, most reliable first: its otter metadata, its
    setup cell's ``NOTEBOOK = "..."`` line, the prefix most of its cell ids share."""
    names: list[str] = []
    meta = cast(dict, nb.get("metadata")) if isinstance(nb, dict) and isinstance(nb.get("metadata"), dict) \
        else {}
    otter = cast(dict, meta.get("otter")) if isinstance(meta.get("otter"), dict) else {}
    name = otter.get("assignment_name")
    if isinstance(name, str) and NAME.match(name):
        names.append(name)
    cells = _cells(nb)
    for cell in cells:
        if cell.get("cell_type") == "code":
            m = NOTEBOOK_LINE.search(_text(cell.get("source")))
            if m:
                names.append(m.group(1))
                break
    prefixes: dict[str, int] = {}
    for cell in cells:
        m = CELL_ID.match(cast(str, cell.get("id"))) if isinstance(cell.get("id"), str) else None
        if m:
            prefixes[m.group(1)] = prefixes.get(m.group(1), 0) + 1
    if prefixes:
        prefix, n = max(prefixes.items(), key=lambda kv: (kv[1], kv[0]))
        if n >= 3 and 2 * n >= len(cells):
            names.append(f"#{prefix}")        # a cell-id prefix: the grader maps it to a name
    return list(dict.fromkeys(names))


def given_cells_found(nb: Any, given: list[str]) -> int:
    """How many of this week's given code cells (80 characters or more) the notebook holds verbatim."""
    mine = {_text(c.get("source")).strip() for c in _cells(nb) if c.get("cell_type") == "code"}
    return sum(1 for g in given if len(g.strip()) >= 80 and g.strip() in mine)


def blocks(nb: Any) -> list[tuple[int, str, list[int]]]:
    """The manual questions' blocks, in order: (index of the prompt cell, the prompt's text, the
    indices of the cells between it and the closing comment)."""
    out: list[tuple[int, str, list[int]]] = []
    current: tuple[int, str, list[int]] | None = None
    for i, cell in enumerate(_cells(nb)):
        text = _text(cell.get("source")) if cell.get("cell_type") == "markdown" else ""
        marks = [] if "<!--" not in text else sorted(
            [(m.start(), BEGIN) for m in re.finditer(re.escape(BEGIN), text)]
            + [(m.start(), END) for m in re.finditer(re.escape(END), text)])
        if not marks:
            if current is not None:
                current[2].append(i)
            continue
        for k, (pos, mark) in enumerate(marks):
            if mark == END and current is not None:
                out.append(current)
                current = None
            elif mark == BEGIN:
                if current is not None:
                    out.append(current)
                stop = marks[k + 1][0] if k + 1 < len(marks) else len(text)
                current = (i, text[pos + len(BEGIN):stop].strip(), [])
    if current is not None:
        out.append(current)
    return out


def assign_blocks(found: list[tuple[int, str, list[int]]], manual: list[str]) -> dict[str, tuple]:
    """Each manual question's block: the one whose prompt names it (``**Question 3`` / ``**q3``),
    else the next unclaimed block in order."""
    result: dict[str, tuple] = {}
    unclaimed = list(found)
    for block in found:
        m = QUESTION_NUMBER.search(block[1])
        name = f"q{m.group(1) or m.group(2)}" if m else None
        if name in manual and name not in result:
            result[name] = block
            unclaimed.remove(block)
    for name in manual:
        if name not in result and unclaimed:
            result[name] = unclaimed.pop(0)
    return result


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
BAR_WIDTH = 10                         # characters of a progress bar drawn as text, as tqdm's


def last_state(text: str) -> str:
    """``text`` as a terminal leaves it: each line from its last carriage return (a progress bar
    printed again and again over itself shows where it ended, not every step)."""
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))


def widget_states(nb: Any) -> dict[str, dict]:
    """The widgets' last states a notebook saved ({model id: its state}; Jupyter saves them in the
    notebook's metadata when "save widget state" is on)."""
    meta = nb.get("metadata") if isinstance(nb, dict) else None
    widgets = meta.get("widgets") if isinstance(meta, dict) else None
    saved = widgets.get(WIDGET_STATE) if isinstance(widgets, dict) else None
    states = saved.get("state") if isinstance(saved, dict) else None
    if not isinstance(states, dict):
        return {}
    return {k: v["state"] for k, v in states.items()
            if isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("state"), dict)}


def widget_text(model: str, states: dict[str, dict], depth: int = 0) -> str | None:
    """A widget's last state as text: a progress bar as tqdm prints it (`` 40%|████      | 4/10``),
    a box as its children side by side, a label or HTML as its text; None when the notebook did
    not save that widget's state."""
    state = states.get(model)
    if state is None or depth > 8:
        return None
    kind = str(state.get("_model_name", ""))
    if kind in ("HBoxModel", "VBoxModel", "BoxModel", "GridBoxModel"):
        children = cast(list, state.get("children")) if isinstance(state.get("children"), list) else []
        parts = [widget_text(c[len("IPY_MODEL_"):], states, depth + 1) for c in children[:20]
                 if isinstance(c, str) and c.startswith("IPY_MODEL_")]
        return ("" if kind == "HBoxModel" else "\n").join(p for p in parts if p)
    if kind in ("FloatProgressModel", "IntProgressModel"):
        value, most = state.get("value", 0), state.get("max", 100)
        if not isinstance(value, int | float) or not isinstance(most, int | float) or most <= 0:
            return "|" + " " * BAR_WIDTH + "|"
        full = round(BAR_WIDTH * min(max(value / most, 0.0), 1.0))
        return "|" + "█" * full + " " * (BAR_WIDTH - full) + "|"
    value = state.get("value")
    if not isinstance(value, str):
        return ""
    if kind == "HTMLModel":                 # tqdm puts its text there, escaped as HTML
        value = html.unescape(re.sub(r"<[^>]*>", "", value))
    return value[:MAX_TEXT]


class _Budget:
    def __init__(self) -> None:
        self.images = 0
        self.bytes = 0


def _saved_image(png: object, images: int, budget: _Budget) -> dict:
    """One saved PNG output, ``{"png": base64}`` (counted in ``budget``), or ``{"note": why not}``:
    past the images of a cell (``images`` shown already) or of the notebook, too large together, or
    not a valid PNG (:func:`png_b64`)."""
    if images >= MAX_SAVED_IMAGES_PER_CELL or budget.images >= MAX_SAVED_IMAGES:
        return {"note": "more saved images than are shown"}
    b64, problem = png_b64(png)
    if b64 is not None and budget.bytes + len(b64) * 3 // 4 > MAX_SAVED_BYTES:
        b64, problem = None, "the notebook's saved images are too large together"
    if b64 is None:
        return {"note": f"a saved image not shown: {problem}"}
    budget.images += 1
    budget.bytes += len(b64) * 3 // 4
    return {"png": b64}


def _saved_outputs(cell: dict, budget: _Budget, widgets: dict[str, dict] | None = None) -> list[dict]:
    """A skipped code cell's outputs as saved in the file: text (as it last stood, widgets
    included: ``widgets``, :func:`widget_states`), and checked PNG images."""
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        return []
    out: list[dict] = []
    text_left, images = MAX_TEXT, 0
    for o in outputs[:200]:
        if not isinstance(o, dict):
            continue
        kind = o.get("output_type")
        text = ""
        if kind == "stream":
            text = last_state(_text(o.get("text")))
        elif kind == "error":
            text = f"{_text(o.get('ename'))}: {_text(o.get('evalue'))}"
        elif kind in ("execute_result", "display_data"):
            data = cast(dict, o.get("data")) if isinstance(o.get("data"), dict) else {}
            if "image/png" in data:
                image = _saved_image(data["image/png"], images, budget)
                if "png" in image:
                    images += 1
                out.append(image)
                continue
            view = data.get(WIDGET_VIEW)
            if isinstance(view, dict) and isinstance(view.get("model_id"), str):
                # a widget (tqdm's progress bar): its last state when the notebook saved it; else
                # the text it was shown with, said to be that
                shown = widget_text(view["model_id"], widgets or {})
                if shown is None:
                    text = last_state(_text(data.get("text/plain")))
                    out.append({"note": "a progress bar or other widget: as first shown (the notebook "
                                        "saved no later state of it)"})
                else:
                    text = shown
                if text and text_left > 0:
                    out.append({"text": text[:text_left]})
                    text_left -= len(text)
                continue
            others = sorted(k for k in data if isinstance(k, str) and k != "text/plain")
            if others:
                out.append({"note": "a saved output not shown: " + ", ".join(others)[:200]})
            text = _text(data.get("text/plain"))
        if text and text_left > 0:
            out.append({"text": text[:text_left]})
            text_left -= len(text)
    return out


def answers(nb: Any, manual: list[str], answer_templates: list[str] | None = None) -> dict[str, dict]:
    """For each manual question, its answer cells (see the module's docstring)."""
    cells = _cells(nb)
    templates = {t.strip() for t in answer_templates or []}
    budget = _Budget()
    widgets = widget_states(nb)
    result: dict[str, dict] = {}
    for name in manual:
        result[name] = {"found": False, "cells": []}
    for name, (_prompt_cell, _prompt, indices) in assign_blocks(blocks(nb), manual).items():
        items = []
        for i in indices[:MAX_CELLS]:
            cell = cells[i]
            kind = cell.get("cell_type")
            source = _text(cell.get("source"))
            if kind == "markdown":
                stripped = source.strip()
                items.append({"cell": i + 1, "type": "markdown", "source": source[:MAX_SOURCE],
                              "unanswered": not stripped or stripped in templates
                              or stripped.startswith(UNANSWERED)})
            elif kind == "code":
                skipped = "otter_ignore" in _tags(cell)
                item = {"cell": i + 1, "type": "code", "source": source[:MAX_SOURCE], "skipped": skipped}
                if skipped:
                    item["saved"] = _saved_outputs(cell, budget, widgets)
                items.append(item)
        result[name] = {"found": True, "cells": items,
                        **({"more": len(indices) - MAX_CELLS} if len(indices) > MAX_CELLS else {})}
    return result


def inspect(data: bytes, manual: list[str], given: list[str] | None = None,
            answer_templates: list[str] | None = None) -> dict:
    """Everything this module reads in one notebook's bytes (see the module's docstring)."""
    if len(data) > MAX_NOTEBOOK_BYTES:
        return {"error": f"not inspected (over {MAX_NOTEBOOK_BYTES // 2**20} MB)"}
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return {"error": "not a notebook"}
    if not isinstance(nb, dict):
        return {"error": "not a notebook"}
    if isinstance(nb.get("cells"), list) and len(nb["cells"]) > MAX_NOTEBOOK_CELLS:
        return {"error": f"not inspected (over {MAX_NOTEBOOK_CELLS} cells)"}
    from .similarity import answer_code
    return {"identity": identity(nb), "given_found": given_cells_found(nb, given or []),
            "answers": answers(nb, manual, answer_templates), "code": answer_code(nb, given or [])}


def wrong_notebook(info: dict, name: str, known: dict[str, str], given: list[str]) -> str | None:
    """The other notebook ``info`` (from :func:`inspect`) shows this one to be, or None. Only when
    the file names another notebook, never this one, and holds at most one of this week's given
    code cells (a student who pasted this week's cells into an old file is graded)."""
    claimed = []
    for n in info.get("identity", []):
        if n.startswith("#"):
            n = known.get(n[1:], f"notebook {n[1:]}")
        claimed.append(n)
    if not claimed or name in claimed:
        return None
    if name[:2].isdigit() and f"notebook {name[:2]}" in claimed:
        return None
    if info.get("given_found", 0) >= 2:
        return None
    return claimed[0]


# ---------------------------------------------------------------- the process

def main() -> int:
    """Read the job (JSON on stdin), write one JSON document per notebook."""
    import resource
    job = json.loads(sys.stdin.buffer.read())
    limit = int(job.get("memory_bytes", 2 * 2**30))
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass
    for src, dest in job["items"]:
        data = b""
        try:
            with open(src, "rb") as f:
                data = f.read(MAX_NOTEBOOK_BYTES + 1)
            info = inspect(data, job["manual"], job.get("given"), job.get("answer_templates"))
        except MemoryError:
            info = {"error": "not inspected (out of memory)"}
        except Exception as exc:                  # one notebook's problem never stops the rest
            info = {"error": f"not inspected ({type(exc).__name__})"}
        del data
        with open(dest + ".part", "w", encoding="utf-8") as f:
            json.dump(info, f)
        os.replace(dest + ".part", dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
