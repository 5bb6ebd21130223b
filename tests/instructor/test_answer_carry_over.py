"""Hand grades follow the answer, not the file: after a re-upload, an answer whose content (its cells'
sources and the images the grader read) is unchanged keeps its hand grade, comment and rubric
items; a changed one waits. And a row whose hand grading is not done is held from the LMS import
unless ``--export-partial`` asks for its automatic points only."""
from __future__ import annotations

import csv
import hashlib
import sqlite3
from pathlib import Path

from autograder import assignment, handgrading, inputs, report
from instructor import lms, manual
from instructor.ledger import Ledger
from tests.support import hostile, lms_samples

FILES = [f"student{k:02d}_{10100 + k}_{20000 + k}_00_toy.ipynb" for k in range(4)]
STUDENTS = [(f"Student {k:02d}", str(10100 + k), "", "", "A") for k in range(4)]


def row(k: int, out: Path, sha: str | None = None, text: str | None = None, figure: bytes | None = None,
        cell: int = 14) -> report.Result:
    """Student ``k``'s row: q4 is a markdown cell and a code cell that drew one figure."""
    f = FILES[k]
    r = report.Result(file=f, stem=inputs.safe_stem(f), status="ok", sha256=sha or f"{k:064x}",
                      question_points={"q1": 2.0, "q2": 1.0, "q3": 1.0})
    r.answers = {"q4": {"found": True, "cells": [
        {"cell": cell, "type": "markdown", "source": text or f"answer {k}", "unanswered": False},
        {"cell": cell + 1, "type": "code", "source": "plt.plot([1, 2])"}]}}
    data = figure if figure is not None else f"figure of {k}".encode()
    path = Path("figures") / r.stem / f"{hashlib.sha256(data).hexdigest()[:8]}.png"
    (out / path).parent.mkdir(parents=True, exist_ok=True)
    (out / path).write_bytes(data)
    r.figures = [(cell + 1, str(path))]
    return r


def graded(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    report.write_all(out, assignment.load(str(hostile.FIXTURE)), [row(k, out) for k in range(4)],
                     {"workers": 1, "mode": "weak"})
    return out


def regrade(out: Path, rows: list[report.Result]) -> list[str]:
    import shutil
    shutil.rmtree(out / "results")
    report.write_all(out, assignment.load(str(hostile.FIXTURE)), rows, {"workers": 1, "mode": "weak"})
    return manual.reapply(out)


def fill(out: Path, path: Path, points: dict[str, str], comments: dict[str, str] | None = None) -> Path:
    with open(out / "manual.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    for r in rows[1:]:
        r[rows[0].index("q4")] = points.get(r[0], r[rows[0].index("q4")])
        r[rows[0].index("comment")] = (comments or {}).get(r[0], r[rows[0].index("comment")])
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path


def q4(out: Path) -> dict[str, str]:
    return {r["file"]: r["q4"] for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}


# ---------------------------------------------------------------- the content key

def test_the_content_key_follows_the_answers_sources_and_images_not_its_place(tmp_path):
    def key(r: report.Result) -> str:
        return handgrading.content_key(tmp_path, r.answers["q4"], r.figures)
    same = key(row(0, tmp_path))
    assert same and key(row(0, tmp_path, sha="f" * 64)) == same            # another file, same answer
    assert key(row(0, tmp_path, cell=20)) == same                          # a cell added above it
    assert key(row(0, tmp_path, text="a new answer")) != same              # a cell changed
    assert key(row(0, tmp_path, figure=b"another figure")) != same         # a figure changed
    missing = row(0, tmp_path)
    (tmp_path / missing.figures[0][1]).unlink()
    assert key(missing) != same                                            # a figure gone
    assert handgrading.content_key(tmp_path, {"found": False}, []) == ""   # no answer: nothing kept


# ---------------------------------------------------------------- the carry-over

def test_a_reupload_keeps_the_grades_of_unchanged_answers_and_the_changed_ones_wait(tmp_path):
    out = graded(tmp_path)
    led = Ledger(out)
    with led.transaction():
        good = led.add_item("q4", 1.0, "Correct plot", "ana")
        led.add_item("q4", -0.5, "No axis labels", "ana")
    led.close()
    filled = fill(out, tmp_path / "f.csv", {f: "1" for f in FILES}, {FILES[1]: "Nice work"})
    assert manual.main([str(out), str(filled)]) == 0
    led = Ledger(out)
    k1 = (f"{1:064x}", FILES[1], "q4")
    with led.transaction():                               # a rubric item and a comment on student 1
        led.save(k1, led.answer(k1).version, "ana", items=[good.id], comment="Right idea.")
    led.close()
    rows = [row(0, out),                                               # as it was
            row(1, out, sha="a" * 64),                                 # re-uploaded, q4 unchanged
            row(2, out, sha="b" * 64, text="a new answer"),            # q4's text changed
            row(3, out, sha="c" * 64, figure=b"a new figure")]         # q4's figure changed
    lines = regrade(out, rows)
    assert ("kept 1 hand grades of 1 answers whose content is unchanged; 2 answers changed and wait "
            "for a hand grade") in lines[0]
    assert (f"the answer changed since it was graded: {FILES[2]} q4, {FILES[3]} q4") in lines[0]
    assert q4(out) == {FILES[0]: "1.0", FILES[1]: "1.0", FILES[2]: "", FILES[3]: ""}
    feedback = (out / "feedback" / f"{inputs.safe_stem(FILES[1])}.md").read_text()
    assert "+1: Correct plot" in feedback and "Right idea." in feedback   # items and comment back
    assert "Nice work" not in feedback            # the row's own comment speaks of the whole notebook
    manual.prefill(out)
    pre = {r["file"]: r["q4"] for r in csv.DictReader((out / "manual.csv").open(encoding="utf-8"))}
    assert pre == {FILES[0]: "1.0", FILES[1]: "1.0", FILES[2]: "", FILES[3]: ""}
    # the kept grade is the same answer in the ledger: a TA's change there reaches the new row
    assert manual.main([str(out), str(fill(out, tmp_path / "g.csv", {FILES[1]: "0.5",
                                                                     FILES[2]: "0"}))]) == 0
    assert q4(out) == {FILES[0]: "1.0", FILES[1]: "0.5", FILES[2]: "0.0", FILES[3]: ""}


def test_an_old_ledger_without_content_keys_is_read_and_keeps_the_rule_of_the_bytes(tmp_path):
    out = graded(tmp_path)
    assert manual.main([str(out), str(fill(out, tmp_path / "f.csv", {f: "1" for f in FILES}))]) == 0
    db = sqlite3.connect(out / "hand_grades.sqlite")
    db.execute("DROP TABLE content")                  # as a ledger made before the table existed
    db.commit()
    db.close()
    assert len(Ledger(out).entries()) == 4
    lines = regrade(out, [row(0, out), row(1, out, sha="a" * 64), row(2, out), row(3, out)])
    assert f"the notebook changed since it was graded: {FILES[1]} q4" in lines[0]
    assert q4(out) == {FILES[0]: "1.0", FILES[1]: "", FILES[2]: "1.0", FILES[3]: "1.0"}
    # noted now: the next re-upload of an unchanged answer keeps its grade
    assert manual.main([str(out), str(fill(out, tmp_path / "g.csv", {FILES[1]: "0.5"}))]) == 0
    lines = regrade(out, [row(0, out), row(1, out, sha="d" * 64), row(2, out), row(3, out)])
    assert "kept 1 hand grades of 1 answers whose content is unchanged; 0 answers changed" in lines[0]
    assert q4(out)[FILES[1]] == "0.5"


# ---------------------------------------------------------------- the LMS import holds open rows

def test_a_row_whose_hand_grading_is_not_done_is_held_until_it_is(tmp_path):
    out = graded(tmp_path)
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(STUDENTS))
    assert manual.main([str(out), str(fill(out, tmp_path / "f.csv", {f: "1" for f in FILES[:3]})),
                        "--gradebook", str(book)]) == 0
    lines = lms.export(out, book)
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())["grades"]
    assert ("10103", "4700") not in got and got[("10100", "4700")] == "5"
    text = "\n".join(lines)
    assert "1 rows are held: their hand grading is not done" in text
    assert "HELD: 1 students" in text and f"  canvas id 10103: {FILES[3]} (hand grading not done: q4)" in text
    lms.export(out, book, export_partial=True)                     # asked for: the automatic points
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())["grades"]
    assert got[("10103", "4700")] == "4"
    # a re-upload with q4 changed: held again until it is graded, then exported
    regrade(out, [row(0, out, sha="e" * 64, text="changed"), row(1, out), row(2, out), row(3, out)])
    assert manual.main([str(out), "--gradebook", str(book)]) == 0
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())["grades"]
    assert ("10100", "4700") not in got and ("10103", "4700") not in got
    filled = fill(out, tmp_path / "g.csv", {FILES[0]: "0.5", FILES[3]: "1"})
    assert manual.main([str(out), str(filled), "--gradebook", str(book)]) == 0
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())["grades"]
    assert got[("10100", "4700")] == "4.5" and got[("10103", "4700")] == "5"
