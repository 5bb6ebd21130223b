"""One PDF per student of the answers graded by hand, to grade them on Gradescope.

    course pdfs DIR [--pdfs FOLDER] [--assignment NN_name]

``DIR`` is the ``--out`` folder of ``course grade`` run on the class's submissions (for a class on
Gradescope: the notebooks of Gradescope's *Export Submissions*). For every submission this writes
``FOLDER/<file-stem>.pdf`` (default ``DIR/gradescope_pdfs``): a first page naming the file and the
student's id, then each question graded by hand starting a page of its own, in the notebook's
order, with its prompt (rendered as Markdown) and the student's answer as the hand-grading pages
show it (the markdown, the code in full, what it printed, the error a cell stopped with, and the
figures the grader drew while running the notebook, each scaled to fit a page; for a skipped cell,
the outputs saved in the notebook), and nothing that names a file the Gradescope grader does not
have (no row of ``manual.csv``).

Gradescope grades every PDF of an assignment by one outline (question -> pages), so every PDF of
the class has each question on the same pages: as many as the class's longest answer to it takes,
at most QUESTION_PAGES. Each student is printed once as the answers come, each question from a
new page; where each question starts is read back from the PDF (the named destination Chromium
writes for the cover's link to it). Where the class's pages differ from a student's, the student
is printed again: a shorter answer followed by blank pages, one over QUESTION_PAGES cut there with
a note. Each PDF is checked against the outline the same way; one that differs says so in
``pages.csv`` and on the terminal. ``outline.csv`` is the outline to type into Gradescope (also
printed); ``pages.csv`` gives each PDF's pages, the pages of each question and a note.

One student never costs the class its PDFs: an answer's text is cut at
:data:`autograder.handgrading.ANSWER_CHARS` characters (with a note), and a PDF that Chromium does not
write within PDF_SECONDS (Chromium and what it started are then killed) or at all is a row of
``pages.csv`` (``no PDF: ...``, no file); the students after it are printed. ``pages.csv`` is
written as ``grades.csv`` is (:mod:`autograder.csvcells`: no cell a spreadsheet runs), and no PDF's
name starts with a formula character (``=x.ipynb`` prints to ``_=x.pdf``).

Why not Otter's own PDF export: Otter exports the notebook as saved (LaTeX or Playwright's
Chromium, neither in ``requirements.txt``) and uploads it to Gradescope only with an instructor's
API token stored in the autograder zip; figures of cells the student never ran are missing. Here
the figures come from the grader's own run, and the PDF is made by the headless Chromium the
report checks already use (``chromium --print-to-pdf``); the pages it prints are the course's
own HTML, with a Content-Security-Policy that lets no script run and no file load.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder import handgrading, mistakes
from autograder.assignment import Question, load
from autograder.csvcells import FORMULA_START, clean, csv_text, text_cell
from autograder.results import Result, num, student_id, student_name

from . import lms

PDF_SECONDS = 60                      # one student's PDF; over it, that row says so and the others print


class PdfError(RuntimeError):
    """One student's PDF could not be printed."""


CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PAGE_MM, MARGIN_MM = 297, 14          # A4's height, and the margin printed round every page
BODY_MM = PAGE_MM - 2 * MARGIN_MM      # what one page holds: 269 mm
# The most pages one question takes in every PDF of a class: one answer that prints 5000 lines
# would otherwise give every student dozens of blank pages; an answer over it is cut there (with a
# note on the page and in pages.csv), as an answer's text is cut at ANSWER_CHARS.
QUESTION_PAGES = 3
# A figure is scaled to fit a page (Chromium would slice a taller one across pages). An answer cut
# at QUESTION_PAGES is a box a little short of that many pages, its overflow hidden: Chromium
# prints exactly the pages such a box spans (measured; overflow:clip prints one page more).
PAGE_STYLE = f"""
@page{{size:A4;margin:{MARGIN_MM}mm}}
.page{{break-before:page}}
.cover h1{{font-size:1.4em}}
.answer{{border:none;padding:0}}
pre{{max-height:none;overflow:visible}}
img{{max-height:{BODY_MM - 30}mm}}
.cut{{max-height:{QUESTION_PAGES * BODY_MM - 5}mm;overflow:hidden}}
"""


def find_chromium() -> str | None:
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


def load_results(out: Path) -> list[Result]:
    """The submissions of a ``course grade`` folder as the hand-grading pages read them."""
    results = []
    for path in sorted((out / "results").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        results.append(Result(
            file=doc["file"], stem=path.stem, status=doc.get("grading_status", ""),
            answers=doc.get("manual_answers") or {}, notebook_note=str(doc.get("notebook_note") or ""),
            figures=[(int(f["cell"]), str(f["file"])) for f in doc.get("figures", [])],
            figure_notes=[(int(f["cell"]), str(f["note"])) for f in doc.get("figure_notes", [])],
            cell_errors=[e for e in doc.get("cell_errors") or [] if isinstance(e, dict)],
            cell_outputs={int(k): v for k, v in (doc.get("answer_outputs") or {}).items()},
            mistakes=mistakes.from_json(doc.get("mistakes"))))
    return sorted(results, key=lambda r: r.file)


def student_html(out: Path, assignment: str, questions: list, prompts: dict[str, str], r: Result,
                 name: str = "", pages: list[int] | None = None, own: list[int] | None = None) -> str:
    """One student's manual answers, each question starting a page (the hand-grading page's
    pieces); ``name``: the student's, when the gradebook gives it; ``pages``: how many pages each
    question takes in every PDF of the class (default one each); ``own``: how many this student's
    answers take, printed one a page (default ``pages``). An answer shorter than its pages is
    followed by blank pages, one longer is cut at them (only past QUESTION_PAGES)."""
    esc = html.escape
    pages = pages or [1] * len(questions)
    own = own or pages
    parts = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
             f"<meta http-equiv='Content-Security-Policy' content=\"{handgrading.CSP}\">",
             f"<title>{esc(assignment)}: {esc(r.file)}</title>",
             f"<style>{handgrading.STYLE}{PAGE_STYLE}</style></head><body>",
             f"<section class='cover'><h1>{esc(assignment)}: answers graded by hand</h1>",
             *([f"<p><b>{esc(name)}</b></p>"] if name else []),
             f"<p>{esc(r.file)}</p><p>id {esc(student_id(r.file)) or '-'}</p><ol>"]
    # the links make the cover a table of contents, and make Chromium write where each question
    # starts into the PDF (a named destination: see sections())
    parts += [f"<li>{page_range(first, n, 'page')}: <a href='#answer-{k}'>{esc(q.name)}</a> "
              f"({num(q.points)} points)</li>"
              for k, (q, first, n) in enumerate(zip(questions, first_pages(pages), pages, strict=True), 1)]
    parts.append("</ol></section>")
    for k, (q, n, mine) in enumerate(zip(questions, pages, own, strict=True), 1):
        parts.append(_question_html(out, k, q, prompts.get(q.name, ""), r, name, n, mine))
    parts.append("</body></html>\n")
    return "".join(parts)


def _question_html(out: Path, k: int, q: Question, prompt: str, r: Result, name: str, pages: int,
                   own: int) -> str:
    """The ``k``-th question on exactly ``pages`` pages: its answer, which takes ``own`` pages printed
    alone, then a blank page for each page short, or cut at ``pages`` with a note when longer."""
    esc = html.escape
    cut = own > pages
    parts = [f"<section class='page{' cut' if cut else ''}' id='answer-{k}'>",
             f"<h2>{esc(q.name)} ({num(q.points)} points)</h2>"]
    if cut:
        parts.append(f"<p class='note'>(cut: this answer takes {own} pages; the first {pages} are "
                     "shown; see the notebook)</p>")
    parts += [handgrading.prompt_html(prompt), handgrading.answer_html(out, q.name, r, None, q.points, name),
              "</section>"]
    parts += [f"<section class='page'><p class='meta'>{esc(q.name)}, page {n} of {pages}: left blank "
              f"(every PDF of the class gives {esc(q.name)} {pages} pages)</p></section>"
              for n in range(own + 1, pages + 1)]
    return "".join(parts)


def first_pages(pages: list[int], cover: int = 1) -> list[int]:
    """The page each question starts on when they take ``pages`` pages each, after the cover."""
    starts, at = [], 1 + cover
    for n in pages:
        starts.append(at)
        at += n
    return starts


def page_range(first: int, count: int, word: str = "") -> str:
    """``2`` or ``3-4`` (``page 2``, ``pages 3-4`` with ``word``)."""
    span = str(first) if count == 1 else f"{first}-{first + count - 1}"
    return f"{word}{'s' if count > 1 else ''} {span}" if word else span


def print_pdf(chromium: str, page: Path, pdf: Path, profile: Path, timeout: float = PDF_SECONDS) -> None:
    """``page`` printed to ``pdf`` by headless Chromium; raises :class:`PdfError` when Chromium
    writes no PDF or runs over ``timeout`` (then Chromium and every process it started are killed)."""
    pdf.unlink(missing_ok=True)
    proc = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--disable-dev-shm-usage", "--no-pdf-header-footer",
                             f"--user-data-dir={profile}", f"--print-to-pdf={pdf}", page.as_uri()],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            errors="replace", start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        pdf.unlink(missing_ok=True)
        raise PdfError(f"Chromium took over {timeout:.0f} s") from None
    finally:
        _kill_group(proc)                            # what Chromium left running
    if not pdf.is_file() or not pdf.read_bytes().startswith(b"%PDF"):
        raise PdfError(f"Chromium wrote no PDF ({clean(err[-300:], 300)})")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def pdf_name(stem: str, used: set[str]) -> str:
    """The PDF's file name: the row's stem, never starting with a character a spreadsheet reads as
    a formula (or an apostrophe): such a stem gets a leading ``_``; never one in ``used`` (any
    case), to which it is added."""
    base = "_" + stem if stem.startswith(FORMULA_START + ("'",)) else stem
    name, k = base, 2
    while name.lower() in used:
        name, k = f"{base}-{k}", k + 1
    used.add(name.lower())
    return name + ".pdf"


def page_count(pdf: Path) -> int:
    """Pages of a PDF as Chromium writes it (each page object is written out, uncompressed)."""
    return len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf.read_bytes()))


# Chromium writes every dictionary of a PDF uncompressed (only streams' data is compressed), the
# page tree's nodes and the catalog among them; an object is read up to its ``endobj``.
_PAGES_NODE = re.compile(rb"(\d+) 0 obj\s*<<\s*/Type\s*/Pages\b((?:(?!endobj).)*)endobj", re.S)
_CATALOG = re.compile(rb"<<\s*/Type\s*/Catalog\b((?:(?!endobj).)*)endobj", re.S)
_REF = re.compile(rb"(\d+) 0 R")


def page_order(data: bytes) -> list[int]:
    """The object numbers of a PDF's pages in page order, read from its page tree (Chromium
    gives a node at most 8 kids, so past 8 pages it is two levels deep); [] without a single root."""
    nodes = {int(m[1]): m[2] for m in _PAGES_NODE.finditer(data)}
    roots = [n for n, body in nodes.items() if b"/Parent" not in body]
    order: list[int] = []
    stack, seen = roots[:1] if len(roots) == 1 else [], set()
    while stack:                                      # depth first, each node's kids in order
        n = stack.pop()
        if n not in nodes:
            order.append(n)
        elif n not in seen:
            seen.add(n)
            kids = re.search(rb"/Kids\s*\[([^\]]*)\]", nodes[n])
            stack.extend(reversed([int(k) for k in _REF.findall(kids[1] if kids else b"")]))
    return order


def destinations(data: bytes) -> dict[str, int]:
    """A PDF's named destinations, each the object number of its page: the catalog's ``/Dests``,
    where Chromium writes every element a link of the page points to (``href='#answer-2'``)."""
    catalog = _CATALOG.search(data)
    ref = re.search(rb"/Dests\s+(\d+) 0 R", catalog[1]) if catalog else None
    if ref is None:
        return {}
    body = re.search(rb"(?<!\d)%d 0 obj\s*<<((?:(?!endobj).)*)endobj" % int(ref[1]), data, re.S)
    found = re.finditer(rb"/([A-Za-z0-9_.-]+)\s*\[\s*(\d+) 0 R", body[1] if body else b"")
    return {m[1].decode("ascii"): int(m[2]) for m in found}


def sections(pdf: Path, count: int) -> list[int] | None:
    """How many pages the cover and each of ``count`` questions take in a PDF of
    :func:`student_html`: each question's section starts where its named destination is; None
    when one cannot be read."""
    data = pdf.read_bytes()
    number = {obj: k for k, obj in enumerate(page_order(data), 1)}
    dests = destinations(data)
    starts = [number.get(dests.get(f"answer-{k}", -1), 0) for k in range(1, count + 1)]
    bounds = [1, *starts, len(number) + 1]
    sizes = [b - a for a, b in zip(bounds, bounds[1:], strict=False)]
    return sizes if min(sizes) > 0 else None


def class_pages(measured: list[list[int]], count: int) -> list[int]:
    """The pages each of ``count`` questions takes in every PDF of the class: as many as the
    longest answer to it takes (``measured``: each student's, one page a question), at most
    QUESTION_PAGES; one page when no answer was measured."""
    return [min(QUESTION_PAGES, max((m[k] for m in measured), default=1)) for k in range(count)]


@dataclass
class _Student:
    """One submission's PDF on its way: printed once with every question from a new page (to measure
    how many pages each answer takes), then again with the class's pages where they differ."""
    r: Result
    name: str                          # the student's, from the gradebook
    pdf: Path                          # where the PDF goes
    html: str = ""                     # the page printed to measure it
    measured: Path | None = None       # that print
    own: list[int] | None = None       # the pages each answer took in it
    error: str = ""                    # why there is no PDF


def _measure(chromium: str, s: _Student, html_text: str, count: int, tmp: Path) -> None:
    """``s`` printed from ``html_text`` (each question from a new page, none padded) into ``tmp``;
    ``s.own``: the pages each of its ``count`` answers took (one each when the PDF's named
    destinations cannot be read but it has a page per question), or ``s.error``."""
    s.html, s.measured = html_text, tmp / s.pdf.name
    try:
        page = tmp / f"{s.r.stem}.html"
        page.write_text(html_text, encoding="utf-8", errors="replace")
        print_pdf(chromium, page, s.measured, tmp / "profile")
        got = sections(s.measured, count)
        if got:
            s.own = got[1:]
        elif page_count(s.measured) == 1 + count:      # no destination read, but a page a question
            s.own = [1] * count
    except (PdfError, OSError) as exc:                # one student's PDF, never the class's
        print(f"course pdfs: {s.r.file}: no PDF: {exc}", file=sys.stderr)
        s.error = f"no PDF: {clean(str(exc), 200)}"


def _final(chromium: str, s: _Student, html_text: str, questions: list[Question], pages: list[int],
           tmp: Path) -> list[str]:
    """``s``'s PDF laid out with the class's ``pages`` (the print that measured it, when that was
    laid out so already), checked against them: its row of pages.csv."""
    got, total = None, 0
    if not s.error:
        try:
            if html_text == s.html and s.measured is not None:
                shutil.move(s.measured, s.pdf)
            else:
                page = tmp / f"{s.r.stem}.html"
                page.write_text(html_text, encoding="utf-8", errors="replace")
                print_pdf(chromium, page, s.pdf, tmp / "profile")
            got, total = sections(s.pdf, len(questions)), page_count(s.pdf)
        except (PdfError, OSError) as exc:
            print(f"course pdfs: {s.r.file}: no PDF: {exc}", file=sys.stderr)
            s.error = f"no PDF: {clean(str(exc), 200)}"
    if s.error:
        s.pdf.unlink(missing_ok=True)                 # never a PDF of an earlier run in its place
        return [s.r.file, student_id(s.r.file), "", "0", s.error, *[""] * len(questions), ""]
    notes = [f"{q.name} cut at {n} pages (its answer takes {mine})"
             for q, n, mine in zip(questions, pages, s.own or pages, strict=True) if mine > n]
    wrong = _mismatch(got, total, questions, pages)
    notes += [wrong] if wrong else []
    for note in notes:
        print(f"course pdfs: {s.r.file}: {note}", file=sys.stderr)
    spans = ([page_range(first, n) for first, n in zip(first_pages(got[1:], got[0]), got[1:], strict=True)]
             if got else [""] * len(questions))
    return [s.r.file, student_id(s.r.file), s.pdf.name, str(total), s.r.status, *spans, "; ".join(notes)]


def _mismatch(got: list[int] | None, total: int, questions: list[Question], pages: list[int]) -> str:
    """What differs between a PDF's pages (``got``: the cover's and each question's, None when
    they could not be read; ``total``) and the outline's ``pages``; '' when nothing does."""
    if got == [1, *pages]:
        return ""
    if got is None:
        where = "the pages of its questions could not be read from the PDF"
    else:
        where = ", ".join(f"{q.name} on {page_range(first, n, 'page')}" for q, first, n
                          in zip(questions, first_pages(got[1:], got[0]), got[1:], strict=True))
    return (f"NOT THE OUTLINE'S PAGES ({where}; {total} pages, the outline's {1 + sum(pages)}): "
            "check this PDF before you upload it")


def write_pdfs(out: Path, dest: Path, chromium: str, assignment: str | None = None) -> tuple[list[Path], str]:
    """``dest/<stem>.pdf`` for every submission in ``out``, each question on the same pages in every
    PDF, ``dest/pages.csv`` and ``dest/outline.csv`` (those pages); ``assignment``: the name or folder
    given to ``course grade`` (default: the name in ``out/questions.json``). Returns the PDFs written
    and the outline on one line."""
    info = json.loads((out / "questions.json").read_text(encoding="utf-8"))
    asg = load(assignment or info["assignment"])
    book, _column = lms.remembered(out)               # the students' names, from the gradebook
    names = lms.student_names(book) if book is not None and book.exists() else {}
    questions = [q for q in asg.questions if q.manual]
    if not questions:
        raise SystemExit(f"{asg.name} has no questions graded by hand")
    prompts = handgrading.prompts(handgrading.blank_notebook(asg), asg)

    def page(s: _Student, pages: list[int] | None = None) -> str:
        return student_html(out, asg.name, questions, prompts, s.r, s.name, pages, s.own if pages else None)

    dest.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    students = [_Student(r, student_name(r.file, names), dest / pdf_name(r.stem, used))
                for r in load_results(out)]
    with tempfile.TemporaryDirectory(prefix="gradescope-pdf-") as tmp:
        tmp_path = Path(tmp)
        for s in students:
            _measure(chromium, s, page(s), len(questions), tmp_path)
        pages = class_pages([s.own for s in students if s.own], len(questions))
        rows = [_final(chromium, s, page(s, pages), questions, pages, tmp_path) for s in students]
    spans = [page_range(first, n) for first, n in zip(first_pages(pages), pages, strict=True)]
    outline = [["question", "points", "pages"]]
    outline += [[q.name, f"{q.points:g}", span] for q, span in zip(questions, spans, strict=True)]
    (dest / "outline.csv").write_text(csv_text(outline), encoding="utf-8")
    table = [["file", "id", "pdf", "pages", "grading_status", *[q.name for q in questions], "note"]]
    table += [[text_cell(c) for c in row] for row in rows]
    (dest / "pages.csv").write_text(csv_text(table), encoding="utf-8", errors="replace")
    line = ", ".join(f"{q.name} {page_range(first, n, 'page')}"
                     for q, first, n in zip(questions, first_pages(pages), pages, strict=True))
    return [s.pdf for s in students if not s.error], f"Gradescope outline (page 1 is the cover): {line}"


def write_feedback_pdfs(out: Path, chromium: str) -> tuple[list[Path], list[str]]:
    """``feedback/<stem>.pdf`` printed from every ``feedback/<stem>.html`` (one student's failure is
    a line, never the class's), then ``canvas_feedback.zip`` made again with the PDFs."""
    from . import handback
    written, lines = [], []
    with tempfile.TemporaryDirectory(prefix="feedback-pdf-") as tmp:
        for page in sorted((out / "feedback").glob("*.html")):
            pdf = page.with_suffix(".pdf")
            try:
                print_pdf(chromium, page, pdf, Path(tmp) / "profile")
            except (PdfError, OSError) as exc:
                lines.append(f"course pdfs: {page.name}: no PDF: {exc}")
                continue
            written.append(pdf)
    return written, lines + handback.write(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="course pdfs",
                                description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path, metavar="DIR", help="the --out folder of course grade")
    p.add_argument("--assignment", default=None, metavar="NN_name",
                   help="as given to course grade, when not one of the course's notebooks")
    p.add_argument("--pdfs", type=Path, default=None, metavar="FOLDER",
                   help="where the PDFs go (default DIR/gradescope_pdfs)")
    p.add_argument("--feedback", action="store_true",
                   help="print the students' feedback instead: DIR/feedback/<stem>.pdf from each "
                        "<stem>.html, and canvas_feedback.zip again with the PDFs")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not (args.out / "questions.json").is_file():
        p.error(f"{args.out} is not a course grade output folder (no questions.json)")
    chromium = find_chromium()
    if chromium is None:
        print("headless Chromium is needed to print the PDFs: apt-get install chromium", file=sys.stderr)
        return 2
    if args.feedback:
        pdfs, lines = write_feedback_pdfs(args.out, chromium)
        print("\n".join([f"wrote {len(pdfs)} feedback PDFs to {args.out / 'feedback'}", *lines]))
        return 0
    dest = args.pdfs or args.out / "gradescope_pdfs"
    pdfs, outline = write_pdfs(args.out, dest, chromium, args.assignment)
    print(f"wrote {len(pdfs)} PDFs, pages.csv and outline.csv to {dest}\n{outline}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
