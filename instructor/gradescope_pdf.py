"""One PDF per student of the answers graded by hand, to grade them on Gradescope.

    course pdfs DIR [--pdfs FOLDER] [--assignment NN_name]

``DIR`` is the ``--out`` folder of ``course grade`` run on the class's submissions (for a class on
Gradescope: the notebooks of Gradescope's *Export Submissions*). For every submission this writes
``FOLDER/<file-stem>.pdf`` (default ``DIR/gradescope_pdfs``): a first page naming the file and the
student's id, then each question graded by hand on a page of its own, in the notebook's order,
with its prompt (rendered as Markdown) and the student's answer as the hand-grading pages show
it (the markdown, the code in full, what it printed, the error a cell stopped with, and the figures
the grader drew while running the notebook; for a skipped cell, the outputs saved in the notebook),
and nothing that names a file the Gradescope grader does not have (no row of ``manual.csv``).
So page 2 is the first manual question, page 3 the second and so on, unless an answer runs
over a page. ``pages.csv`` lists each PDF's pages.

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
from pathlib import Path

from autograder import handgrading
from autograder.assignment import load
from autograder.csvcells import FORMULA_START, clean, csv_text, text_cell
from autograder.results import Result, num, student_id, student_name

from . import lms

PDF_SECONDS = 60                      # one student's PDF; over it, that row says so and the others print


class PdfError(RuntimeError):
    """One student's PDF could not be printed."""


CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PAGE_STYLE = """
@page{size:A4;margin:14mm}
.page{break-before:page}
.cover h1{font-size:1.4em}
.answer{border:none;padding:0}
pre{max-height:none;overflow:visible}
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
            cell_outputs={int(k): v for k, v in (doc.get("answer_outputs") or {}).items()}))
    return sorted(results, key=lambda r: r.file)


def student_html(out: Path, assignment: str, questions: list, prompts: dict[str, str], r: Result,
                 name: str = "") -> str:
    """One student's manual answers, one question per page (the hand-grading page's pieces);
    ``name``: the student's, when the gradebook gives it."""
    esc = html.escape
    parts = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
             f"<meta http-equiv='Content-Security-Policy' content=\"{handgrading.CSP}\">",
             f"<title>{esc(assignment)}: {esc(r.file)}</title>",
             f"<style>{handgrading.STYLE}{PAGE_STYLE}</style></head><body>",
             f"<section class='cover'><h1>{esc(assignment)}: answers graded by hand</h1>",
             *([f"<p><b>{esc(name)}</b></p>"] if name else []),
             f"<p>{esc(r.file)}</p><p>id {esc(student_id(r.file)) or '-'}</p><ol>"]
    parts += [f"<li>page {k}: {esc(q.name)} ({num(q.points)} points)</li>"
              for k, q in enumerate(questions, 2)]
    parts.append("</ol></section>")
    for q in questions:
        parts.append(f"<section class='page'><h2>{esc(q.name)} ({num(q.points)} points)</h2>")
        parts.append(handgrading.prompt_html(prompts.get(q.name, "")))
        parts.append(handgrading.answer_html(out, q.name, r, None, q.points, name))
        parts.append("</section>")
    parts.append("</body></html>\n")
    return "".join(parts)


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


def write_pdfs(out: Path, dest: Path, chromium: str, assignment: str | None = None) -> list[Path]:
    """``dest/<stem>.pdf`` for every submission in ``out`` and ``dest/pages.csv``; ``assignment``:
    the name or folder given to ``course grade`` (default: the name in ``out/questions.json``)."""
    info = json.loads((out / "questions.json").read_text(encoding="utf-8"))
    asg = load(assignment or info["assignment"])
    book, _column = lms.remembered(out)               # the students' names, from the gradebook
    names = lms.student_names(book) if book is not None and book.exists() else {}
    questions = [q for q in asg.questions if q.manual]
    if not questions:
        raise SystemExit(f"{asg.name} has no questions graded by hand")
    prompts = handgrading.prompts(handgrading.blank_notebook(asg), asg)
    dest.mkdir(parents=True, exist_ok=True)
    used: set[str]
    written, rows, used = [], [], set()
    with tempfile.TemporaryDirectory(prefix="gradescope-pdf-") as tmp:
        tmp_path = Path(tmp)
        for r in load_results(out):
            pdf = dest / pdf_name(r.stem, used)
            try:
                page = tmp_path / f"{r.stem}.html"
                html_text = student_html(out, asg.name, questions, prompts, r, student_name(r.file, names))
                page.write_text(html_text, encoding="utf-8", errors="replace")
                print_pdf(chromium, page, pdf, tmp_path / "profile")
                pages = page_count(pdf)
            except (PdfError, OSError) as exc:            # one student's PDF, never the class's
                print(f"course pdfs: {r.file}: no PDF: {exc}", file=sys.stderr)
                rows.append([r.file, student_id(r.file), "", "0", f"no PDF: {clean(str(exc), 200)}"])
                continue
            written.append(pdf)
            rows.append([r.file, student_id(r.file), pdf.name, str(pages), r.status])
    table = [["file", "id", "pdf", "pages", "grading_status"]]
    table += [[text_cell(c) for c in row] for row in rows]
    (dest / "pages.csv").write_text(csv_text(table), encoding="utf-8", errors="replace")
    return written


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
    pdfs = write_pdfs(args.out, dest, chromium, args.assignment)
    print(f"wrote {len(pdfs)} PDFs and pages.csv to {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
