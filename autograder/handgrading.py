"""Hand grading, the grader's side: one page per manual question with every student's answer, and a
CSV to fill in (``course manual``, :mod:`instructor.manual`, merges it back).

``course grade`` writes, when the assignment has questions graded by hand (``manual: true``):

- ``manual/<question>.html``: the question's prompt, then every submission's answer side by side:
  its markdown, its code (shown, not folded), what its cells printed, the error a cell stopped
  with (``NameError: name 'PlotAtention' is not defined``) and the figures they drew while the
  grader ran them (PNG, embedded), and for cells the grader skips (``otter_ignore``: training runs)
  the outputs saved in the notebook, labelled as such. The question's prompt (the course's own
  text) is rendered as Markdown by markdown-it-py with raw HTML off (:func:`markdown_html`).
  Everything from a notebook is untrusted: text is HTML-escaped, images are embedded only as
  checked PNGs (:func:`notebook_info.check_png`), and the page's Content-Security-Policy forbids
  scripts, frames and every source but ``data:`` images.
- ``manual.csv``: ``file``, ``id``, one column per manual question, ``comment``, ``key``,
  ``sha256`` (the notebook's, short) and ``ledger`` (the ledger's change number then): one row
  per submission, to fill in (a filled-in one is never deleted by a later ``course grade``: it is
  kept beside as ``manual-N.csv``). ``key`` (:func:`autograder.csvcells.file_key`) joins a row to
  ``grades.csv``: two different files never share one, whatever their names and whatever a
  spreadsheet does to the ``file`` cell; a CSV without it is joined by ``file``.
- What one answer may embed in a page is capped: at most ROW_IMAGE_BYTES of PNG and
  ROW_IMAGE_PIXELS decoded pixels (width x height, summed) per row and page, no image over
  IMAGE_PIXELS; a note stands where an image was left out. Its text (markdown, code and what the
  code printed, together) is cut at ANSWER_CHARS characters, with a note of how much more there
  is (29 cells of 20,000 complex-script characters took Chromium 73 s and 113 pages to print).

What ``course manual DIR FILLED.csv`` does with the filled-in CSV: :mod:`instructor.manual`.
"""
from __future__ import annotations

import base64
import csv
import hashlib
import html
import json
import os
import shutil
import struct
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from . import notebook_info, outdir
from .assignment import ASSIGNMENTS, PACKAGE_DIR, Assignment
from .csvcells import csv_text, file_key, text_cell
from .results import NO_NAMES, Result, StudentNames, num, student_id, student_name
from .status import Status

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
# what one row may embed in one page: PNG bytes, decoded pixels (summed), and pixels of one image
ROW_IMAGE_BYTES = 2 * 2**20
ROW_IMAGE_PIXELS = 8_000_000
IMAGE_PIXELS = 4_000_000
ANSWER_CHARS = 20_000                    # characters of one answer's text in a page
_MARKDOWN = MarkdownIt("commonmark", {"html": False})      # raw HTML in the text is escaped, not kept


def markdown_html(text: str) -> str:
    """Markdown as HTML (CommonMark, by markdown-it-py): any HTML written in the text comes out
    escaped, and links whose scheme is not http(s), mailto or a relative one are not made links."""
    return _MARKDOWN.render(text)


def prompt_html(prompt: str) -> str:
    """A manual question's prompt, rendered, in its box."""
    body = markdown_html(prompt) if prompt.strip() else "<p>(the prompt is in the notebook)</p>"
    return f"<div class='prompt'>{body}</div>"


# ---------------------------------------------------------------- the assignment's side

def blank_notebook(asg: Assignment) -> dict | None:
    """The blank student notebook (trusted: the course's own), as assignment.template_code finds it."""
    for path in (asg.folder / f"{asg.name}.ipynb", PACKAGE_DIR.parent / "notebooks" / f"{asg.name}.ipynb"):
        if path.is_file():
            try:
                nb = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                return None
            return nb if isinstance(nb, dict) else None
    return None


def _manual_names(asg: Assignment) -> list[str]:
    return [q.name for q in asg.questions if q.manual]


def prompts(blank: dict | None, asg: Assignment) -> dict[str, str]:
    """Each manual question's prompt, from the blank notebook."""
    if blank is None:
        return {}
    return {q: block[1] for q, block in notebook_info.assign_blocks(notebook_info.blocks(blank),
                                                                    _manual_names(asg)).items()}


def answer_templates(blank: dict | None, asg: Assignment) -> list[str]:
    """The blank notebook's markdown answer cells (an answer still equal to one is unanswered)."""
    if blank is None:
        return []
    cells = blank.get("cells", [])
    out = []
    for _q, (_i, _p, indices) in notebook_info.assign_blocks(notebook_info.blocks(blank),
                                                             _manual_names(asg)).items():
        for i in indices:
            if cells[i].get("cell_type") == "markdown":
                out.append(notebook_info._text(cells[i].get("source")))
    return out


def known_notebooks(asg: Assignment) -> dict[str, str]:
    """The course's notebooks by their two-digit prefix (``02`` -> ``02_with_position``)."""
    known: dict[str, str] = {}
    for folder in {ASSIGNMENTS, asg.folder.parent}:
        for p in sorted(folder.glob("[0-9][0-9]_*/assignment.json")):
            known.setdefault(p.parent.name[:2], p.parent.name)
    known[asg.name[:2]] = asg.name
    return known


def questions_json(asg: Assignment) -> str:
    """``questions.json`` in the output folder: what ``course manual`` needs to check the points,
    and each hand-graded question's prompt (the course's own text), so that the folder alone can
    show the pages again (:func:`rewrite_pages`, ``course mark``)."""
    texts = prompts(blank_notebook(asg), asg) if any(q.manual for q in asg.questions) else {}
    doc = {"assignment": asg.name, "auto_points": asg.max_points,
           "questions": [{"name": q.name, "manual": q.manual,
                          "points": q.points if q.manual else q.max_points,
                          **({"prompt": texts.get(q.name, "")} if q.manual else {})}
                         for q in asg.questions]}
    return json.dumps(doc, indent=1) + "\n"


# ---------------------------------------------------------------- the pages and the CSV to fill in

# manual.csv's columns after the ones to fill in, written by the grader: the row's key, its
# notebook's SHA-256 (short) and the ledger's change number (instructor.ledger) when it was written,
# so that a merge refuses a cell of a notebook re-uploaded or an answer graded since
STAMPS = ("key", "sha256", "ledger")


def template_csv(asg: Assignment, results: list[Result]) -> str:
    rows = [["file", "id", *_manual_names(asg), "comment", *STAMPS]]
    for r in sorted(results, key=lambda r: r.file):
        rows.append([text_cell(r.file), student_id(r.file), *[""] * len(_manual_names(asg)), "",
                     file_key(r.file), (r.sha256 or "")[:16], "0"])
    return csv_text(rows)


def _filled(path: Path) -> bool:
    """Does this manual.csv hold anything typed in (a grade or a comment)?"""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error):
        return True                                      # unreadable: keep it, to be safe
    if not rows:
        return False
    typed = [i for i, c in enumerate(rows[0]) if c.strip() not in ("file", "id", *STAMPS)]
    return any(any(row[i].strip() for i in typed if i < len(row)) for row in rows[1:])


PREFILLED = outdir.PREFILLED          # instructor.manual.prefill: the SHA-256 of what it wrote


def set_aside_filled(out: Path, dry_run: bool = False) -> Path | None:
    """Before a new run: a filled-in ``manual.csv`` is copied to ``manual-N.csv`` beside OUT's
    grading (never deleted); an untouched one, or one exactly as ``course grade`` pre-filled it
    from the ledger, is not kept. Either way the grading that replaces it takes it away (its swap,
    :mod:`autograder.outdir`): nothing here changes what OUT reads. Returns the new name, if any.
    ``dry_run``: only the name, nothing written (the run says so before it writes)."""
    src = outdir.resolve(out)
    path = src / "manual.csv"
    if not path.exists():
        return None
    try:
        untouched = (src / PREFILLED).read_text(encoding="ascii").strip() \
            == hashlib.sha256(path.read_bytes()).hexdigest()
    except (OSError, UnicodeDecodeError):
        untouched = False
    if untouched or not _filled(path):        # as course grade pre-filled it: the ledger holds all of it
        return None
    n = 1
    while (out / f"manual-{n}.csv").exists():
        n += 1
    dest = out / f"manual-{n}.csv"
    if not dry_run:                            # whole or not at all: a run killed here keeps OUT as it was
        tmp = out / f".manual-{n}.csv.{os.getpid()}.part"
        shutil.copyfile(path, tmp)
        os.replace(tmp, dest)
    return dest


STYLE = """
body{font-family:sans-serif;margin:1.5em;color:#222}
.prompt{background:#f4f6fa;border-left:4px solid #4a78b5;padding:.1em 1em;max-width:70em;
    overflow-wrap:anywhere}
.prompt pre,.prompt code{background:#e8ecf3}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(30em,1fr));gap:1em;margin-top:1em}
.answer{border:1px solid #ccc;border-radius:6px;padding:.6em .9em;overflow:hidden}
.answer h2{font-size:1em;margin:.1em 0;word-break:break-all}
.meta{color:#555;font-size:.85em;margin:.2em 0 .6em}
.md{white-space:pre-wrap;background:#fffdf3;border:1px solid #eee6c8;padding:.4em .6em;margin:.4em 0}
.unanswered{color:#a33;font-style:italic}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:.4em;margin:.3em 0;
    max-height:24em;overflow:auto}
.saved{border-left:3px solid #d9a441;padding-left:.5em}
.label{font-size:.8em;color:#8a6d1f}
.note{font-size:.85em;color:#a33}
.status{color:#a33;font-weight:bold}
pre.error{background:#fbe3e3;border-left:3px solid #c33;color:#700}
.codelabel{font-size:.8em;color:#555;margin:.4em 0 0}
.given{color:#1d6b2a;font-weight:bold}
img{max-width:100%;height:auto;border:1px solid #ddd;margin:.3em 0;display:block}
"""


class _Budget:
    """What one row may still embed in the page it is on."""

    def __init__(self) -> None:
        self.bytes = ROW_IMAGE_BYTES
        self.pixels = ROW_IMAGE_PIXELS
        self.chars = ANSWER_CHARS


def _text(text: str, budget: _Budget) -> tuple[str, str]:
    """``text`` HTML-escaped within what the row's budget of characters has left, and the note
    that says how much was cut ('' when nothing was)."""
    shown = text[:max(budget.chars, 0)]
    budget.chars -= len(shown)
    cut = len(text) - len(shown)
    note = f"<p class='note'>(cut: {cut} characters more; see the notebook)</p>" if cut else ""
    return html.escape(shown), note


SCROLL_LINES = 18      # lines of 40 characters: more may scroll inside a <pre> (max-height: 24em)


def _pre(shown: str, cls: str = "") -> str:
    """``shown`` (escaped) in a ``<pre>``; one that may scroll inside its box takes the keyboard's
    focus (``tabindex``), so that it can be read without a mouse. Counted as it wraps in the
    narrowest column of the pages (30em): an over-count only adds a stop to Tab."""
    lines = sum(max(1, -(-len(line) // 40)) for line in shown.split("\n"))
    attrs = (f" class='{cls}'" if cls else "") + (" tabindex='0'" if lines > SCROLL_LINES else "")
    return f"<pre{attrs}>{shown}</pre>"


def _img(out: Path, path: str, alt: str, budget: _Budget) -> str:
    """An image file under ``out`` embedded, only when it passes the PNG check and fits the row's
    budget (bytes, and pixels once decoded)."""
    target = (out / path).resolve()
    try:
        inside = out.resolve() in target.parents
        size = target.stat().st_size if inside else 0
        data = target.read_bytes() if inside and size <= min(budget.bytes, 8 * 2**20) else b""
    except OSError:
        size, data = 0, b""
    if size > budget.bytes:
        return ("<p class='note'>(an image was left out: this answer's images are over "
                f"{ROW_IMAGE_BYTES // 2**20} MB on this page)</p>")
    if notebook_info.check_png(data, 8 * 2**20) is not None:
        return "<p class='note'>(an image that is not a valid PNG was left out)</p>"
    width, height = struct.unpack(">II", data[16:24])
    if width * height > IMAGE_PIXELS:
        return (f"<p class='note'>(an image of {width} x {height} pixels was left out: at most "
                f"{IMAGE_PIXELS // 10**6} million pixels each)</p>")
    if width * height > budget.pixels:
        return ("<p class='note'>(an image was left out: this answer's images are over "
                f"{ROW_IMAGE_PIXELS // 10**6} million pixels on this page)</p>")
    budget.bytes -= len(data)
    budget.pixels -= width * height
    b64 = base64.b64encode(data).decode("ascii")
    return f"<img alt='{html.escape(alt, quote=True)}' src='data:image/png;base64,{b64}'>"


def content_key(where: Path, answer: dict | None, figures: list[tuple[int, str]]) -> str:
    """One answer's content, as the grader read it: a SHA-256 of its cells' types and sources (in
    order; not their numbers, so a cell added above moves nothing) and of every image it shows (the
    figures its code cells drew under the grader, files under ``where``, and the images saved in a
    skipped cell). A hand grade follows this key across re-uploads (:func:`instructor.manual.match`):
    an answer whose key is unchanged is graded. "" for an answer not found (nothing to compare:
    a notebook that could not be read is no unchanged answer)."""
    if not isinstance(answer, dict) or not answer.get("found"):
        return ""
    drawn: dict[int, list[str]] = {}
    for cell, path in figures:
        drawn.setdefault(cell, []).append(path)

    def image(path: str) -> str:
        target = (where / path).resolve()
        try:         # a figure that cannot be read is no figure the grader saw: it counts as changed
            if where.resolve() in target.parents:
                return hashlib.sha256(target.read_bytes()).hexdigest()
        except OSError:
            pass
        return "missing"

    parts: list[object] = []
    for c in answer.get("cells", []):
        shown = [image(str(o["figure"])) for o in c.get("saved", []) if isinstance(o, dict) and "figure" in o]
        if not c.get("skipped") and type(c.get("cell")) is int:
            shown += [image(p) for p in drawn.get(c["cell"], [])]
        parts.append([str(c.get("type", "")), str(c.get("source", "")), bool(c.get("unanswered")), shown])
    parts.append(int(answer.get("more") or 0))
    return hashlib.sha256(json.dumps(parts, ensure_ascii=True).encode("ascii")).hexdigest()


def answer_html(out: Path, q: str, r: Result, row: int | None, points: float, name: str = "",
                given: float | None = None, anonymous: str | None = None) -> str:
    """One submission's answer to ``q``; ``row``: its row in manual.csv, or None where the reader
    has no manual.csv (a Gradescope PDF); ``name``: the student's, when the gradebook gives it;
    ``given``: the points it was graded by hand (the ledger's, :mod:`instructor.ledger`), shown in
    place of ``__``; ``anonymous``: a label shown instead of the file, the id and the name
    (``course mark``)."""
    a = r.answers.get(q)
    parts = [_answer_head(q, r, row, points, name, given, anonymous)]
    if not r.grading.ok:
        parts.append(f"<p class='status'>{html.escape(r.status)}</p>")
    if r.grading.kind is Status.WRONG_NOTEBOOK or a is None or not a.get("found"):
        parts.append(_no_answer(r))
        return "".join(parts)
    # one budget for the whole answer: the cells are shown in order until it is spent
    budget = _Budget()
    ran = _Ran.of(r)
    if not a.get("cells"):
        parts.append("<p class='unanswered'>No answer cells.</p>")
    for c in a.get("cells", []):
        parts.append(_cell_html(out, c, ran, budget))
    if a.get("more"):
        parts.append(f"<p class='note'>{int(a['more'])} more cells not shown</p>")
    parts.append("</section>")
    return "".join(parts)


def _answer_head(q: str, r: Result, row: int | None, points: float, name: str, given: float | None,
                 anonymous: str | None) -> str:
    """The answer's section opened, and its heading: whose it is (or only its anonymous label)
    and its points (``__`` until it is graded by hand)."""
    esc = html.escape
    where = f"row {row} of manual.csv · " if row is not None else ""
    who = f"<b>{esc(name)}</b> · " if name else ""
    mark = (f"<span class='given'>{esc(q)}: {num(given)} / {num(points)} (graded by hand)</span>"
            if given is not None else f"{esc(q)}: __ / {num(points)}")
    head = (f"<h2>{esc(anonymous)}</h2><p class='meta'>{mark}</p>" if anonymous is not None else
            f"<h2>{esc(r.file)}</h2><p class='meta'>{who}id {esc(student_id(r.file)) or '-'} · {where}"
            f"{mark}</p>")
    named = "".join(f"<li>{esc(m.question)}: {esc(m.sentence)}</li>" for m in r.mistakes)
    if named:                # what the judge recognised in this notebook's automatically graded code
        head += f"<p class='meta'>Named mistakes (automatically graded questions):</p><ul>{named}</ul>"
    return f"<section class='answer' id='row-{row if row is not None else 0}'>{head}"


def _no_answer(r: Result) -> str:
    """Why no answer is shown (another week's notebook, none found), and the section closed."""
    if r.grading.kind is Status.WRONG_NOTEBOOK:
        return "<p class='unanswered'>(another week's notebook: no answers shown)</p></section>"
    why = r.notebook_note or ("the notebook could not be read" if not r.answers
                              else "the question's cells are not in this notebook")
    return f"<p class='unanswered'>No answer found ({html.escape(why)}).</p></section>"


class _Ran:
    """What the grader's run left per code cell (by its number): what it printed, the figures it
    drew, the notes on figures left out, and the error it stopped with."""

    def __init__(self, printed: dict, figures: dict[int, list[str]], notes: dict[int, list[str]],
                 errors: dict[int, list[str]]) -> None:
        self.printed, self.figures, self.notes, self.errors = printed, figures, notes, errors

    @classmethod
    def of(cls, r: Result) -> _Ran:
        figures: dict[int, list[str]] = {}
        for cell, path in r.figures:
            figures.setdefault(cell, []).append(path)
        notes: dict[int, list[str]] = {}
        for cell, note in r.figure_notes:
            notes.setdefault(cell, []).append(note)
        errors: dict[int, list[str]] = {}
        for e in r.cell_errors:
            if isinstance(e, dict) and type(e.get("cell")) is int:
                errors.setdefault(e["cell"], []).append(str(e.get("error") or e.get("kind") or "error"))
        return cls(r.cell_outputs, figures, notes, errors)

    def outputs_html(self, out: Path, cell: Any, budget: _Budget) -> str:
        """Cell ``cell``'s outputs under the grader: its text, figures, notes and error, in order."""
        esc = html.escape
        parts = []
        text = notebook_info.last_state(self.printed.get(cell, ""))     # a progress bar: where it ended
        if text.strip():
            shown, cut = _text(text, budget)
            parts.append(f"{_pre(shown)}{cut}")
        for k, path in enumerate(self.figures.get(cell, []), 1):
            parts.append(_img(out, path, f"figure {k} of cell {cell}", budget))
        for note in self.notes.get(cell, []):
            parts.append(f"<p class='note'>{esc(note)}</p>")
        for error in self.errors.get(cell, []):
            shown, cut = _text(error, budget)
            parts.append(f"<p class='codelabel'>the cell stopped with an error when the grader ran it:</p>"
                         f"{_pre(shown, 'error')}{cut}")
        return "".join(parts)


def _cell_html(out: Path, c: dict, ran: _Ran, budget: _Budget) -> str:
    """One answer cell: a markdown answer's text, or a code cell's source and its outputs (as the
    grader ran it, or as the student's notebook saved them for a cell the grader skips)."""
    cell = c.get("cell")
    source = str(c.get("source", ""))
    if c.get("type") == "markdown":
        if c.get("unanswered"):
            return "<p class='unanswered'>(not answered: the text is still the template's)</p>"
        shown, cut = _text(source, budget)
        return f"<div class='md'>{shown}</div>{cut}"
    shown, cut = _text(source, budget)
    code = f"<p class='codelabel'>code (cell {html.escape(str(cell))})</p>{_pre(shown, 'code')}{cut}"
    if c.get("skipped"):
        return code + _saved_html(out, cell, c.get("saved", []), budget)
    return code + ran.outputs_html(out, cell, budget)


def _saved_html(out: Path, cell: Any, saved: list, budget: _Budget) -> str:
    """The outputs a skipped cell (otter_ignore) had in the student's notebook: images, text, notes."""
    parts = ["<div class='saved'><p class='label'>not run by the grader (otter_ignore): "
             "outputs as saved in the student's notebook</p>"]
    if not saved:
        parts.append("<p class='unanswered'>(no saved outputs)</p>")
    for k, o in enumerate(saved, 1):
        if "figure" in o:
            parts.append(_img(out, str(o["figure"]), f"saved image {k} of cell {cell}", budget))
        elif "text" in o:
            shown, cut = _text(str(o["text"]), budget)
            parts.append(f"{_pre(shown)}{cut}")
        elif "note" in o:
            parts.append(f"<p class='note'>{html.escape(str(o['note']))}</p>")
    parts.append("</div>")
    return "".join(parts)


def write_page(path: Path, out_dir: Path, name: str, q: str, points: float, prompt: str,
               results: list[Result], given: dict[str, float] | None = None,
               names: StudentNames = NO_NAMES) -> None:
    """One question's page, written a row at a time (every image is read, checked and embedded
    only while its row is written); ``given``: {row's file: its hand-graded points}."""
    esc = html.escape
    given = given or {}
    rows = sorted(results, key=lambda r: r.file)
    out = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
           f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
           "<meta name='referrer' content='no-referrer'>",
           f"<title>{esc(name)} {esc(q)}: hand grading</title><style>{STYLE}</style></head><body>",
           f"<h1>{esc(name)}, {esc(q)} ({num(points)} points): every answer</h1>",
           prompt_html(prompt),
           f"<p>{len(rows)} submissions, in the order of <code>manual.csv</code>"
           f"{f', {len(given)} of them graded by hand' if given else ''}. Put each one's points "
           f"(0 to {num(points)}) in its column <code>{esc(q)}</code>, then run "
           "<code>course manual DIR manual.csv</code> (or grade them in <code>course mark DIR</code>). "
           "Figures were drawn by the grader while it ran "
           "the notebook; outputs of cells it skips are as the student saved them.</p><div class='grid'>"]
    with open(path, "w", encoding="utf-8", errors="replace") as f:
        f.write("\n".join(out) + "\n")
        for row, r in enumerate(rows, 2):               # the spreadsheet's row number (1 is the header)
            f.write(answer_html(out_dir, q, r, row, points, student_name(r.file, names), given.get(r.file))
                    + "\n")
        f.write("</div></body></html>\n")


def rewrite_pages(out: Path, spec: dict, results: list[Result], given: dict[tuple[str, str], float],
                  names: StudentNames = NO_NAMES, parts: Path | None = None) -> dict[Path, Path]:
    """Every ``manual/<question>.html`` again, showing the hand grades ``given`` ({(file,
    question): points}), from the folder alone (``questions.json`` holds the prompts): each page is
    written to a temporary file beside it, or where :func:`autograder.outdir.part` says for the
    output folder ``parts`` (``out`` a grading of it, never written); {page: its temporary file},
    for the caller to rename with the rest (:func:`instructor.manual.write_all`)."""
    made: dict[Path, Path] = {}
    for q in spec.get("questions", []):
        if not q.get("manual"):
            continue
        page = out / "manual" / f"{q['name']}.html"
        if not page.parent.is_dir():
            continue
        tmp = (page.with_name(f".{page.name}.{os.getpid()}.part") if parts is None
               else outdir.part(parts, f"manual-{page.name}"))
        made[page] = tmp
        try:
            write_page(tmp, out, str(spec.get("assignment", "")), q["name"], float(q["points"]),
                       str(q.get("prompt", "")), results,
                       {f: v for (f, qn), v in given.items() if qn == q["name"]}, names)
        except BaseException:
            for written in made.values():
                written.unlink(missing_ok=True)
            raise
    return made


def write_pages(out: Path, asg: Assignment, results: list[Result],
                names: StudentNames = NO_NAMES) -> list[str]:
    """``manual/<question>.html`` for every manual question (its rows named as in ``names``) and
    ``manual.csv``; notes for the report."""
    blank = blank_notebook(asg)
    texts = prompts(blank, asg)
    folder = out / "manual"
    folder.mkdir(parents=True, exist_ok=True)
    notes = []
    for q in asg.questions:
        if q.manual:
            write_page(folder / f"{q.name}.html", out, asg.name, q.name, q.points, texts.get(q.name, ""),
                       results, names=names)
            missing = [r.file for r in results if r.answers and not r.answers.get(q.name, {}).get("found")]
            if missing:
                notes.append(f"{q.name}: no answer cells found in {len(missing)} notebooks "
                             f"(e.g. {missing[0]}); open those notebooks")
    with open(out / "manual.csv", "w", encoding="utf-8", errors="replace", newline="") as f:
        f.write(template_csv(asg, results))
    return notes
