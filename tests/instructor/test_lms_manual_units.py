"""Fast tests of the LMS ids, the wrong-week check, the hand-grading pages, the merge of a filled-in
CSV and the gradebook exports (no notebook is executed here; test_grade_lms.py runs the commands)."""
from __future__ import annotations

import base64
import csv
import io
import json
import re
import shutil
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path

import hostile
import lms_samples
import pytest

from autograder import assignment, csvcells, handgrading, inputs, messages, notebook_info, report
from instructor import lms, manual

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"


def png(width: int = 4, height: int = 3) -> bytes:
    """A real PNG, drawn by matplotlib."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(width, height), dpi=10)
    fig.gca().plot([0, 1], [1, 0])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


# ---------------------------------------------------------------- ids

@pytest.mark.parametrize("file, expected", [
    ("smithjohn_12345_67890_01_no_talking.ipynb", ("canvas", "12345")),
    ("smithjohn_LATE_12345_67890_hw.ipynb", ("canvas", "12345")),
    ("smithjohn_late_12345_67890_hw.zip/part1.ipynb", ("canvas", "12345")),
    ("section 1/müllerjonas_10533_556790_01_no_talking.ipynb", ("canvas", "10533")),
    ("John Smith_123_assignsubmission_file_/01_no_talking.ipynb", ("moodle", "123")),
    ("Renée Ø_0042_assignsubmission_file_hw.ipynb", ("moodle", "42")),
    ("alice.ipynb", None),
    # a full name with underscores is still the folder's owner, never the file names in it
    ("Eve_Evil_123_assignsubmission_file_/Vic Tim_456_assignsubmission_file_0.ipynb", ("moodle", "123")),
    ("Eve_Evil_123_assignsubmission_file_/vic_456_789_x.ipynb", ("moodle", "123")),
    ("Eve_123_assignsubmission_file_x_456_assignsubmission_file_y.ipynb", ("moodle", "123")),
    ("alice_smith.ipynb", None),
    ("hw_final_2.ipynb", None),
])
def test_lms_ids_are_parsed_from_canvas_and_moodle_names(file, expected):
    assert inputs.lms_id(file) == expected


# ---------------------------------------------------------------- PNG checks

def test_png_check_accepts_matplotlib_and_refuses_the_rest():
    good = png()
    assert notebook_info.check_png(good) is None
    assert notebook_info.check_png(b"GIF89a" + good[6:]) == "not a PNG image"
    assert "checksum" in notebook_info.check_png(good[:40] + bytes([good[40] ^ 1]) + good[41:])
    assert notebook_info.check_png(good[:-5]) is not None                       # cut off
    assert notebook_info.check_png(good + b"<script>") is not None              # bytes after IEND
    assert "KB" in notebook_info.check_png(good, max_bytes=100)
    huge = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 6, 0, 0, 0))
            + chunk(b"IEND", b""))
    assert "too large" in notebook_info.check_png(huge)
    b64, problem = notebook_info.png_b64(base64.b64encode(good).decode()[:50] + "\n"
                                         + base64.b64encode(good).decode()[50:])
    assert problem is None and base64.b64decode(b64) == good
    assert notebook_info.png_b64("<svg onload=alert(1)>")[0] is None


# ---------------------------------------------------------------- which notebook

def _info(nb: dict, name: str) -> dict:
    return notebook_info.inspect(json.dumps(nb).encode(), [],
                                 given=assignment.template_code(name, assignment.ASSIGNMENTS / name) or [])


def _known():
    asg = assignment.load("03_attention")
    return asg, handgrading.known_notebooks(asg)


def test_another_weeks_notebook_is_recognised_and_this_weeks_is_not():
    asg, known = _known()
    nb02 = json.loads((NOTEBOOKS / "02_with_position.ipynb").read_text())
    nb03 = json.loads((NOTEBOOKS / "03_attention.ipynb").read_text())
    assert notebook_info.wrong_notebook(_info(nb02, "03_attention"), "03_attention", known,
                                        asg.given_code) == "02_with_position"
    assert notebook_info.wrong_notebook(_info(nb03, "03_attention"), "03_attention", known,
                                        asg.given_code) is None
    # as Colab saves it (metadata replaced, no cell ids): the setup cell still says which it is
    colab02 = json.loads(hostile.colab(json.dumps(nb02).encode()))
    assert notebook_info.wrong_notebook(_info(colab02, "03_attention"), "03_attention", known,
                                        asg.given_code) == "02_with_position"
    # only the cell ids left: they name the notebook by its number
    bare = {**nb02, "metadata": {}, "cells": [{**c, "source": c["source"] if c["cell_type"] != "code"
                                               else "x = 1"} for c in nb02["cells"]]}
    assert notebook_info.wrong_notebook(_info(bare, "03_attention"), "03_attention", known,
                                        asg.given_code) == "02_with_position"


def test_a_notebook_that_says_nothing_or_holds_this_weeks_cells_is_graded():
    asg, known = _known()
    toy = hostile.load()
    toy["metadata"] = {}
    assert notebook_info.wrong_notebook(_info(toy, "03_attention"), "03_attention", known,
                                        asg.given_code) is None
    # an old file reused: it says 02 but holds this week's given cells
    nb02 = json.loads((NOTEBOOKS / "02_with_position.ipynb").read_text())
    nb03 = json.loads((NOTEBOOKS / "03_attention.ipynb").read_text())
    pasted = {**nb02, "cells": nb02["cells"][:3] + nb03["cells"][3:]}
    assert notebook_info.wrong_notebook(_info(pasted, "03_attention"), "03_attention", known,
                                        asg.given_code) is None


# ---------------------------------------------------------------- manual answers

@pytest.mark.parametrize("name", sorted(p.stem for p in NOTEBOOKS.glob("0*.ipynb")))
def test_every_manual_question_of_every_notebook_has_its_answer_cells(name):
    asg = assignment.load(name)
    manual_qs = [q.name for q in asg.questions if q.manual]
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
    found = notebook_info.answers(nb, manual_qs)
    assert sorted(found) == sorted(manual_qs)
    for q, a in found.items():
        assert a["found"] and a["cells"], (name, q)
        assert all(c["type"] in ("markdown", "code") for c in a["cells"])
    prompts = handgrading.prompts(nb, asg)
    for q in manual_qs:
        assert f"Question {q[1:]} " in prompts[q], (name, q, prompts[q][:80])


def test_skipped_cells_show_their_saved_outputs_and_only_checked_pngs():
    nb = hostile.load()
    good = base64.b64encode(png()).decode()
    nb["cells"][14] = {"cell_type": "code", "metadata": {"tags": ["otter_ignore"]}, "source": "plot()",
                       "execution_count": 1, "outputs": [
                           {"output_type": "stream", "name": "stdout", "text": ["loss 0.5\n"]},
                           {"output_type": "display_data", "metadata": {},
                            "data": {"image/png": good, "text/plain": "<Figure>"}},
                           {"output_type": "display_data", "metadata": {},
                            "data": {"image/png": base64.b64encode(b"<script>x</script>").decode()}},
                           {"output_type": "display_data", "metadata": {},
                            "data": {"image/svg+xml": "<svg onload='x'/>", "text/plain": "svg"}},
                           {"output_type": "error", "ename": "ValueError", "evalue": "oops"}]}
    info = notebook_info.inspect(json.dumps(nb).encode(), ["q4"])
    (md, code) = info["answers"]["q4"]["cells"]
    assert md["type"] == "markdown" and md["unanswered"]
    assert code["skipped"] and code["cell"] == 15
    saved = code["saved"]
    assert saved[0] == {"text": "loss 0.5\n"}
    assert saved[1] == {"png": good}
    assert saved[2]["note"].startswith("a saved image not shown: not a PNG")
    assert saved[3]["note"] == "a saved output not shown: image/svg+xml" and saved[4] == {"text": "svg"}
    assert saved[5] == {"text": "ValueError: oops"}


def test_blocks_follow_otter_markers_even_when_one_cell_closes_and_opens():
    nb = {"cells": [
        {"cell_type": "markdown", "source": "<!-- BEGIN QUESTION -->\n\n**Question 6 (2 points).** Plot."},
        {"cell_type": "code", "source": "plot()", "metadata": {}},
        {"cell_type": "markdown", "source": "<!-- END QUESTION -->\n\n<!-- BEGIN QUESTION -->\n\n"
                                            "**Question 7 (1 point).** Why?"},
        {"cell_type": "markdown", "source": "Because."},
        {"cell_type": "markdown", "source": "<!-- END QUESTION -->\n\nThe end."}]}
    found = notebook_info.answers(nb, ["q6", "q7"])
    assert [c["cell"] for c in found["q6"]["cells"]] == [2]
    assert [(c["cell"], c["source"]) for c in found["q7"]["cells"]] == [(4, "Because.")]
    # a question whose block was deleted is reported missing, not given another's answer
    assert notebook_info.answers({"cells": nb["cells"][2:]}, ["q6", "q7"])["q6"]["found"] is False


# ---------------------------------------------------------------- messages

def test_figure_messages_are_checked_field_by_field():
    data = png()
    ok = messages.parse_submission(json.dumps({"t": "figure", "cell": 3,
                                               "png": base64.b64encode(data).decode()}).encode())
    assert ok == {"t": "figure", "cell": 3, "png": data}
    note = messages.parse_submission(b'{"t": "figure", "cell": 3, "png": "", "note": "too big"}')
    assert note["png"] == b"" and note["note"] == "too big"
    for bad, why in [
        (b'{"t": "figure", "cell": 3, "png": "not base64!"}', "a figure that is not base64"),
        (b'{"t": "figure", "cell": 3, "png": 7}', "a figure that is not base64"),
        (b'{"t": "figure", "cell": "3", "png": ""}', "cell is not a cell number"),
        (b'{"t": "figure", "cell": 3, "png": "", "html": "<script>"}', "unknown fields"),
        (json.dumps({"t": "figure", "cell": 3, "png": "A" * (messages.FIGURE_B64 + 4)}).encode(),
         "a figure that is not base64"),
        (b'{"t": "cells_done", "errors": [], "output": "", "tamper": [], "marks": [[1]]}', "marks"),
        (b'{"t": "cells_done", "errors": [], "output": "", "tamper": [], "marks": [[1, -4]]}', "marks"),
    ]:
        with pytest.raises(messages.Malformed, match=why):
            messages.parse_submission(bad)
    done = messages.parse_submission(b'{"t": "cells_done", "errors": [], "output": "", "tamper": [], '
                                     b'"marks": [[2, 0], [5, 17]]}')
    assert done["marks"] == [[2, 0], [5, 17]]


# ---------------------------------------------------------------- pages, CSV, merge

class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


EVIL = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=1\">"


def _results(out: Path) -> list[report.Result]:
    """Three rows as the grader leaves them: their figures already written under ``out``."""
    good = png()
    rows = []
    for k, (file, status) in enumerate([("alicesmith_10101_20001_00_toy.ipynb", "ok"),
                                        ("=HYPERLINK(1)_10202_20002_x.ipynb", "ok"),
                                        ("nobody.ipynb", "timeout: the notebook ran over 600 s")]):
        r = report.Result(file=file, stem=inputs.safe_stem(file), status=status,
                          question_points={"q1": 2.0, "q2": 2.0 - k, "q3": 1.0})
        folder = out / "figures" / r.stem
        folder.mkdir(parents=True)
        (folder / "cell015-1.png").write_bytes(good)
        (folder / "cell015-2.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
        (folder / "saved-cell016-1.png").write_bytes(good)
        r.answers = {"q4": {"found": True, "cells": [
            {"cell": 14, "type": "markdown", "source": EVIL, "unanswered": False},
            {"cell": 15, "type": "code", "source": "plt.plot(x)</pre><script>", "skipped": False},
            {"cell": 16, "type": "code", "source": "train()", "skipped": True,
             "saved": [{"figure": f"figures/{r.stem}/saved-cell016-1.png"}, {"text": "</pre><b>x"},
                       {"note": "<i>n</i>"}]}]}}
        r.figures = [(15, f"figures/{r.stem}/cell015-1.png"), (15, f"figures/{r.stem}/cell015-2.png"),
                     (15, "figures/../../../../etc/passwd")]
        r.figure_notes = [(15, "<b>a figure dropped</b>")]
        r.cell_outputs = {15: "printed <u>this</u>"}
        rows.append(r)
    return rows


@pytest.fixture()
def graded(tmp_path) -> tuple[Path, list[report.Result]]:
    asg = assignment.load(str(hostile.FIXTURE))
    results = _results(tmp_path)
    report.write_all(tmp_path, asg, results, {"workers": 1, "mode": "weak"})
    return tmp_path, results


def test_hand_grading_page_escapes_student_text_and_embeds_only_pngs(graded):
    out, results = graded
    page = (out / "manual" / "q4.html").read_text()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page and "img-src data:" in page
    parser = Tags()
    parser.feed(page)
    tags = [t for t, _ in parser.tags]
    assert "script" not in tags and "iframe" not in tags and "object" not in tags
    assert not [a for _, attrs in parser.tags for a in attrs if a.lower().startswith("on")]
    imgs = [attrs["src"] for t, attrs in parser.tags if t == "img"]
    assert len(imgs) == 3 * 2 and all(src.startswith("data:image/png;base64,") for src in imgs)
    assert page.count("an image that is not a valid PNG was left out") == 3 * 2   # bad bytes; outside
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "printed &lt;u&gt;this&lt;/u&gt;" in page and "&lt;b&gt;a figure dropped&lt;/b&gt;" in page
    assert "not run by the grader (otter_ignore)" in page
    assert page.index("HYPERLINK") < page.index("alicesmith") < page.index("nobody")   # manual.csv order
    # the figures are also files, and results/ lists them
    doc = json.loads((out / "results" / "alicesmith_10101_20001_00_toy.json").read_text())
    assert doc["figures"][0] == {"cell": 15, "file": "figures/alicesmith_10101_20001_00_toy/cell015-1.png"}
    saved = doc["manual_answers"]["q4"]["cells"][2]["saved"][0]
    assert (out / saved["figure"]).read_bytes() == png()


def test_manual_csv_lists_every_row_with_its_id(graded):
    out, _ = graded
    rows = list(csv.reader((out / "manual.csv").open()))
    link, alice = "=HYPERLINK(1)_10202_20002_x.ipynb", "alicesmith_10101_20001_00_toy.ipynb"
    key = csvcells.file_key
    assert rows == [["file", "id", "q4", "comment", "key", "sha256", "ledger"],
                    ["'" + link, "10202", "", "", key(link), "", "0"],
                    [alice, "10101", "", "", key(alice), "", "0"],
                    ["nobody.ipynb", "", "", "", key("nobody.ipynb"), "", "0"]]
    grades = list(csv.DictReader((out / "grades.csv").open()))
    assert [(g["id"], g["manual_points_earned"], g["final_points_earned"]) for g in grades] == \
        [("10202", "", ""), ("10101", "", ""), ("", "", "")]


def _fill(path: Path, rows: list[list[str]], sep: str = ",") -> Path:
    buf = io.StringIO()
    csv.writer(buf, delimiter=sep, lineterminator="\r\n").writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


def test_merge_checks_every_number_and_writes_nothing_on_a_mistake(graded, tmp_path):
    out, _ = graded
    before = (out / "grades.csv").read_bytes()
    bad = _fill(tmp_path / "bad.csv", [["file", "id", "q4", "comment"],
                                       ["alicesmith_10101_20001_00_toy.ipynb", "10101", "2", ""],
                                       ["nobody.ipynb", "", "abc", ""],
                                       ["ghost.ipynb", "", "1", ""],
                                       ["alicesmith_10101_20001_00_toy.ipynb", "10101", "1", ""],
                                       ["=HYPERLINK(1)_10202_20002_x.ipynb", "", "-0.5", ""]])
    with pytest.raises(manual.ManualError) as err:
        manual.merge(out, bad)
    text = str(err.value)
    assert "bad.csv row 2 (alicesmith_10101_20001_00_toy.ipynb): q4 = 2 is not between 0 and 1.0" in text
    assert "row 3 (nobody.ipynb): q4 = 'abc' is not a number" in text
    assert "row 4 (ghost.ipynb): no such row in grades.csv" in text
    assert "row 5 (alicesmith_10101_20001_00_toy.ipynb): the same file as row 2" in text
    assert "row 6 (=HYPERLINK(1)_10202_20002_x.ipynb): q4 = -0.5 is not between 0 and 1.0" in text
    assert (out / "grades.csv").read_bytes() == before
    assert manual.main([str(out), str(bad)]) == 1


def test_merge_fills_grades_totals_and_feedback_and_blank_cells_keep_grades(graded, tmp_path):
    out, _ = graded
    # as a European spreadsheet saves it: ';', decimal comma, the formula apostrophe dropped
    first = _fill(tmp_path / "ta1.csv", [["file", "id", "q4", "comment"],
                                         ["=HYPERLINK(1)_10202_20002_x.ipynb", "10202", "0,5", "Axes?"],
                                         ["alicesmith_10101_20001_00_toy.ipynb", "10101", "1", "Good plot."]],
                  sep=";")
    lines = manual.merge(out, first)
    assert lines[0].endswith("2 of 3 rows have every hand-graded question (q4)")
    rows = {r["file"]: r for r in csv.DictReader((out / "grades.csv").open())}
    alice = rows["alicesmith_10101_20001_00_toy.ipynb"]
    assert (alice["q4"], alice["total_points_earned"], alice["manual_points_earned"],
            alice["final_points_earned"], alice["percent_correct"]) == ("1.0", "5.0", "1.0", "6.0", "1.0")
    other = rows["'=HYPERLINK(1)_10202_20002_x.ipynb"]
    assert (other["q4"], other["final_points_earned"]) == ("0.5", "4.5")
    assert rows["nobody.ipynb"]["q4"] == "" and rows["nobody.ipynb"]["final_points_earned"] == ""
    fb = (out / "feedback" / "alicesmith_10101_20001_00_toy.md").read_text()
    assert "## Graded by your instructor\n\n- q4: 1.0 / 1.0\n\nComment: Good plot." in fb
    # a second file with only the last row: the others keep their grades and comments
    second = _fill(tmp_path / "ta2.csv", [["file", "q4"], ["nobody.ipynb", "0"],
                                          ["alicesmith_10101_20001_00_toy.ipynb", ""]])
    manual.merge(out, second)
    rows = {r["file"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert [rows[f]["final_points_earned"] for f in sorted(rows)] == ["4.5", "6.0", "3.0"]
    fb = (out / "feedback" / "alicesmith_10101_20001_00_toy.md").read_text()
    assert fb.count("## Graded by your instructor") == 1 and "Comment: Good plot." in fb


def test_a_filled_in_manual_csv_is_kept_by_the_next_run(graded):
    out, _ = graded
    # untouched: not kept (the next run's swap replaces it; nothing here changes what OUT reads)
    assert handgrading.set_aside_filled(out) is None and not (out / "manual-1.csv").exists()
    (out / "manual.csv").write_text("file,id,q4,comment\na.ipynb,,1,\n")
    assert handgrading.set_aside_filled(out, dry_run=True) == out / "manual-1.csv"
    assert not (out / "manual-1.csv").exists()
    assert handgrading.set_aside_filled(out) == out / "manual-1.csv"
    assert (out / "manual-1.csv").read_text() == "file,id,q4,comment\na.ipynb,,1,\n"
    assert (out / "manual.csv").exists()


# ---------------------------------------------------------------- gradebooks

def _graded_for_lms(tmp_path: Path, final: dict[str, str]) -> Path:
    asg = assignment.load(str(hostile.FIXTURE))
    results = []
    for file, points in [("alicesmith_10101_20001_00_toy.ipynb", 5.0),
                         ("bobjones_LATE_10202_20002_00_toy.ipynb", 4.0),
                         ("leecarol_10303_20003_00_toy.ipynb", 2.0),
                         ("stranger_77777_20009_00_toy.ipynb", 1.0), ("noid.ipynb", 5.0)]:
        results.append(report.Result(file=file, stem=inputs.safe_stem(file), status="ok",
                                     question_points={"q1": points}))
    out = tmp_path / "out"
    out.mkdir()
    report.write_all(out, asg, results, {"workers": 1, "mode": "weak"})
    if final:
        rows = [["file", "q4"]] + [[f, v] for f, v in final.items()]
        manual.merge(out, _fill(tmp_path / "filled.csv", rows))
    return out


@pytest.mark.parametrize("bom, sep, posting", [(True, ",", True), (False, ";", False)])
def test_canvas_import_round_trip(tmp_path, bom, sep, posting):
    out = _graded_for_lms(tmp_path, {"alicesmith_10101_20001_00_toy.ipynb": "1",
                                     "bobjones_LATE_10202_20002_00_toy.ipynb": "0.5"})
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(lms_samples.STUDENTS, bom=bom, sep=sep,
                                                  manual_posting=posting))
    lines = lms.export(out, book, export_partial=True)       # carol: her automatic points, asked for
    assert lines[0].startswith(f"{out / 'canvas_import.csv'}: 3 students' column '00 Toy (4700)' filled in")
    data = (out / "canvas_import.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") == bom
    got = lms_samples.canvas_import(data)
    assert got["assignments"] == {"4700": "00 Toy (4700)"}            # nothing else can change
    assert got["points"] == {"4700": "6.00"}
    assert got["grades"] == {("10101", "4700"): "6", ("10202", "4700"): "4.5", ("10303", "4700"): "2"}
    header = next(csv.reader(io.StringIO(data.decode("utf-8-sig")), delimiter=sep))
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "00 Toy (4700)"]
    text = "\n".join(lines)
    assert "2 rows have no hand-graded points yet" in text       # carol, stranger: automatic points only
    assert "1 graded students are not in the gradebook, left out: 77777" in text
    assert "1 rows have no Canvas or Moodle id in their name" in text


def test_canvas_column_is_found_by_name_title_or_id_and_never_guessed(tmp_path):
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(lms_samples.STUDENTS))
    gb = lms.read_gradebook(book)
    assert gb.header[lms.choose_column(gb, "00_toy", None)] == "00 Toy (4700)"
    assert gb.header[lms.choose_column(gb, "03_attention", "4702")] == "Quiz 1 (4702)"
    assert gb.header[lms.choose_column(gb, "03_attention", "quiz 1")] == "Quiz 1 (4702)"
    with pytest.raises(lms.GradebookError, match="matches none"):
        lms.choose_column(gb, "03_attention", None)
    with pytest.raises(lms.GradebookError, match="matches several"):
        lms.choose_column(gb, "03_attention", "(47")
    (tmp_path / "other.csv").write_text("Name,Score\nA,1\n")
    with pytest.raises(lms.GradebookError, match="neither a Canvas gradebook"):
        lms.read_gradebook(tmp_path / "other.csv")
    (tmp_path / "nosection.csv").write_text("Student,ID,SIS User ID,00 Toy (4700)\nA,1,,\n")
    with pytest.raises(lms.GradebookError, match="no Section column"):
        lms.read_gradebook(tmp_path / "nosection.csv")


def test_points_possible_mismatch_is_reported(tmp_path):
    out = _graded_for_lms(tmp_path, {})
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(lms_samples.STUDENTS, toy_points="100"))
    text = "\n".join(lms.export(out, book))
    assert "Canvas gives this assignment 100 points possible; the notebook is worth 6" in text


def test_moodle_worksheet_gets_its_grade_column_filled(tmp_path):
    asg = assignment.load(str(hostile.FIXTURE))
    results = [report.Result(file=f, stem=inputs.safe_stem(f), status="ok", question_points={"q1": p})
               for f, p in [("Ann Lee_101_assignsubmission_file_/00_toy.ipynb", 5.0),
                            ("Bo Chen_102_assignsubmission_file_/00_toy.ipynb", 3.0)]]
    out = tmp_path / "out"
    out.mkdir()
    report.write_all(out, asg, results, {"workers": 1, "mode": "weak"})
    manual.merge(out, _fill(tmp_path / "f.csv",
                            [["file", "q4"], [results[0].file, "1"], [results[1].file, "0"]]))
    book = tmp_path / "worksheet.csv"
    book.write_bytes(lms_samples.moodle_worksheet([("101", "Ann Lee"), ("102", "Bo Chen"), ("103", "Cy")]))
    lines = lms.export(out, book)
    assert "2 students' column 'Grade' filled in" in lines[0]
    rows = list(csv.DictReader(io.StringIO((out / "moodle_import.csv").read_text())))
    assert [(r["Identifier"], r["Grade"], r["Maximum Grade"]) for r in rows] == \
        [("Participant 101", "6", "6.00"), ("Participant 102", "3", "6.00"), ("Participant 103", "", "6.00")]
    # the feedback goes into "Feedback comments" as HTML, with the final total; none for Cy
    comments = [r["Feedback comments"] for r in rows]
    assert comments[0].startswith("<h1>00_toy: feedback for Ann Lee_101_assignsubmission_file_/00_toy.ipynb")
    assert "<strong>Total: 6.0 / 6.0 points</strong>" in comments[0]
    assert "<strong>Total: 3.0 / 6.0 points</strong>" in comments[1] and comments[2] == ""
    assert lms.student_names(book) == {("moodle", "101"): "Ann Lee", ("moodle", "102"): "Bo Chen",
                                       ("moodle", "103"): "Cy"}


def test_a_student_with_rows_of_different_points_is_held_not_best_of_n(tmp_path):
    """One upload of several guesses must not export its best: a student's rows must agree, else
    nothing is exported for that student and the terminal lists every row."""
    asg = assignment.load(str(hostile.FIXTURE))
    rows = [("alicesmith_10101_20001_00_toy.ipynb", 5.0, "ok"),
            ("bobjones_10202_1_up.zip/guess1.ipynb", 5.0, "ok"),           # Bob's guesses differ
            ("bobjones_10202_1_up.zip/guess2.ipynb", 0.0, "ok"),
            ("leecarol_10303_2_up.zip/a.ipynb", 3.0, "ok"),                  # Carol's agree
            ("leecarol_10303_3_copy.ipynb", 3.0, "ok"),
            ("weekwrong_55555_4_up.zip/a.ipynb", 2.0, "ok"),                 # over the cap
            ("weekwrong_55555_4_up.zip/d.ipynb", 0.0, inputs.over_cap_status(4))]
    results = [report.Result(file=f, stem=inputs.safe_stem(f), status=st, question_points={"q1": p})
               for f, p, st in rows]
    out = tmp_path / "out"
    out.mkdir()
    report.write_all(out, asg, results, {"workers": 1, "mode": "weak"})
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(lms_samples.STUDENTS))
    lines = lms.export(out, book, export_partial=True)   # q4: no hand grade here
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())
    assert got["grades"] == {("10101", "4700"): "5", ("10303", "4700"): "3"}
    held = lines[lines.index(next(x for x in lines if x.startswith("HELD: 2 students"))) + 1:]
    assert held == ["  canvas id 10202: bobjones_10202_1_up.zip/guess1.ipynb (5 points); "
                    "bobjones_10202_1_up.zip/guess2.ipynb (0 points)",
                    "  canvas id 55555: weekwrong_55555_4_up.zip/a.ipynb (2 points); "
                    "1 more notebooks not graded (over 3 from one student)"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Students with several rows (3)" in page and "bobjones_10202_1_up.zip/guess2.ipynb" in page


@pytest.mark.parametrize("sep", [",", ";"])
def test_a_name_with_a_unicode_line_separator_does_not_change_the_delimiter(tmp_path, sep):
    """str.splitlines splits inside a quoted name holding U+2028 or U+0085: the gradebook's
    delimiter is found without it, so the gradebook is not refused for the whole class."""
    out = _graded_for_lms(tmp_path, {})
    students = [("Aaron\u2028A", "10404", "", "", "S"), ("Nel\u0085N", "10505", "", "", "S")]
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(students + lms_samples.STUDENTS, sep=sep,
                                                  manual_posting=False))
    gb = lms.read_gradebook(book)
    assert (gb.kind, gb.delimiter, gb.rows[2][0]) == ("canvas", sep, "Aaron\u2028A")
    lms.export(out, book, export_partial=True)
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())
    assert got["grades"][("10101", "4700")] == "5"
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_bytes(lms_samples.moodle_worksheet([("333", "Aaron\u0085A"), ("111", "Alice A")]))
    assert lms.read_gradebook(worksheet).kind == "moodle"
    (tmp_path / "open.csv").write_text('Student,ID\n"' + "x" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(lms.GradebookError, match="not a CSV file"):
        lms.read_gradebook(tmp_path / "open.csv")


# ---------------------------------------------------------------- the report

def test_histogram_labels_lie_inside_the_picture():
    import re
    svg = report._histogram_svg([1.0] * 7 + [0.5] * 3 + [0.0])
    width, height = (int(x) for x in re.search(r'viewBox="0 0 (\d+) (\d+)"', svg).groups())
    counts = [(float(x), float(y), int(c)) for x, y, c in
              re.findall(r'<text class="count" x="([\d.]+)" y="([\d.]+)"[^>]*>(\d+)<', svg)]
    assert [c for *_, c in counts] == [1, 0, 0, 0, 0, 3, 0, 0, 0, 7]
    for x, y, _ in counts:
        assert 12 <= y <= height and 0 <= x <= width                     # 12 px text stays inside
    for y, h in re.findall(r'<rect x="[\d.]+" y="(\d+)" width="\d+" height="(\d+)"', svg):
        assert int(y) >= 12 + 5 and int(y) + int(h) <= height


def test_report_has_a_row_for_every_submission(graded):
    out, results = graded
    page = (out / "report.html").read_text()
    table = page[page.index("<h2>Every row (3)</h2>"):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 1 + len(results)
    assert "<td>10101</td>" in table and "=HYPERLINK(1)_10202_20002_x.ipynb" in table
    assert "href='manual/q4.html'" in page


def test_the_grader_keeps_only_pngs_from_answer_cells_and_writes_them_at_once(tmp_path, monkeypatch):
    from autograder import intake, runner
    from autograder.job import Job
    monkeypatch.setattr(runner, "FIGURES", 2)
    job = Job(index=0, sub=inputs.Submission("a.ipynb", None, stem="a"), staging=Path(), figure_cells=[15])

    def send(cell, data, **kw):
        intake.keep_figure(job, {"t": "figure", "cell": cell, "png": data, **kw}, tmp_path)

    good = png()
    send(15, good)
    send(15, b"<html><script>alert(1)</script></html>")
    send(3, good)
    send(15, b"", note="a figure too large to keep (900 KB)")
    send(15, good)
    send(15, good)
    assert job.figures == [(15, "figures/a/cell015-1.png"), (15, "figures/a/cell015-2.png")]
    assert (tmp_path / "figures" / "a" / "cell015-2.png").read_bytes() == good
    assert [n for _, n in job.figure_notes] == [
        "a figure dropped: not a PNG image", "a figure from a cell that is not an answer (dropped)",
        "a figure too large to keep (900 KB)", "a figure dropped: more figures than are kept"]


# ---------------------------------------------------------------- the notebook reader

FAKE_READER = """
import json, os, sys, time
job = json.loads(sys.stdin.buffer.read())
for src, dest in job["items"]:
    data = open(src, "rb").read()
    if data == b"slow":
        time.sleep(60)
    if data == b"crash":
        os._exit(1)
    with open(dest + ".part", "w") as f:
        json.dump({"read": data.decode()}, f)
    os.replace(dest + ".part", dest)
"""


def test_a_slow_or_fatal_notebook_costs_the_reader_only_its_own_row(tmp_path):
    """Each notebook is bounded in time: the one the reader hangs on, or dies on, is marked and a
    new reader takes the ones after it (rather than one reader with 60 s for the whole batch)."""
    import sys
    import time

    from autograder.inspector import Inspector
    items = []
    for i, text in enumerate(["a", "slow", "b", "crash", "c"]):
        (tmp_path / f"{i}.ipynb").write_text(text)
        items.append((i, str(tmp_path / f"{i}.ipynb"), str(tmp_path / f"{i}.json")))
    t0 = time.monotonic()
    reader = Inspector(items, {}, tmp_path, tmp_path / "log", REPO, seconds_per_notebook=2.0,
                       command=[sys.executable, "-c", FAKE_READER])
    info = reader.wait()
    assert time.monotonic() - t0 < 15
    assert info == {0: {"read": "a"}, 1: {"error": "not inspected (it took over 2 s to read)"},
                    2: {"read": "b"}, 3: {"error": "not inspected (the reader stopped on it)"},
                    4: {"read": "c"}}
    assert not list(tmp_path.glob("*.json"))


def test_the_reader_refuses_a_notebook_of_too_many_cells_at_once():
    import time
    data = ('{"cells":[' + ",".join(["{}"] * (2 * 2**20)) + "]}").encode()
    t0 = time.monotonic()
    assert notebook_info.inspect(data, ["q4"]) == {"error": "not inspected (over 5000 cells)"}
    assert time.monotonic() - t0 < 3


@pytest.mark.parametrize("raw, sep, first", [
    (b"file;id;q4\r\na.ipynb;1;0,5\r\nb.ipynb;2;1\r\n", ";", ["file", "id", "q4"]),    # decimal commas
    (b"file,id,q4,comment,key\na.ipynb,1,1,\nb.ipynb,2,0,\n", ",", ["file", "id", "q4", "comment", "key"]),
    ('Student,ID\r\n"Aaron\u2028A",1\r\n'.encode(), ",", ["Student", "ID"]),
    ("file;q4\r\nRen\u00e9e.ipynb;1\r\n".encode("cp1252"), ";", ["file", "q4"]),
])
def test_a_spreadsheets_csv_is_read_with_its_delimiter(raw, sep, first):
    """One reader for what a person's spreadsheet saved (manual.csv filled in, LMS gradebooks)."""
    rows, got, bom = csvcells.read_spreadsheet(raw)
    assert (got, rows[0], bom) == (sep, first, False)
    assert rows[-1][0] in ("b.ipynb", "Aaron\u2028A", "Ren\u00e9e.ipynb")


# ---------------------------------------------------------------- the ledger, held rows

def _week_results(shas: dict[str, str]) -> list[report.Result]:
    return [report.Result(file=f, stem=inputs.safe_stem(f), status="ok", question_points={"q1": 2.0},
                          sha256=sha) for f, sha in shas.items()]


def test_a_regrade_gives_the_ledgers_hand_grades_back_by_content(tmp_path):
    asg = assignment.load(str(hostile.FIXTURE))
    alice, bob, carol = ("alicesmith_10101_1_00_toy.ipynb", "bobjones_10202_2_00_toy.ipynb",
                         "leecarol_10303_3_00_toy.ipynb")
    out = tmp_path / "out"
    out.mkdir()
    report.write_all(out, asg, _week_results({alice: "a" * 64, bob: "b" * 64, carol: "c" * 64}),
                     {"workers": 1, "mode": "weak"})
    manual.merge(out, _fill(tmp_path / "f.csv", [["file", "q4", "comment"], [alice, "1", "Good."],
                                                  [bob, "0.5", ""], [carol, "0", ""]]))
    ledger = manual.load_ledger(out)
    assert sorted((e["file"], e["question"], e.get("points"), e.get("comment")) for e in ledger.values()) == [
        (alice, "", None, "Good."), (alice, "q4", 1.0, None), (bob, "q4", 0.5, None),
        (carol, "q4", 0.0, None)]
    # a re-grade: new totals, Bob's row renamed (same bytes), Carol's notebook replaced
    results = _week_results({alice: "a" * 64, "bobjones_LATE_10202_2_00_toy.ipynb": "b" * 64,
                             carol: "d" * 64})
    for r in results:
        r.question_points = {"q1": 1.0}
    import shutil
    shutil.rmtree(out / "results")                                      # as course grade does first
    report.write_all(out, asg, results, {"workers": 1, "mode": "weak"})
    lines = manual.reapply(out)
    assert lines == [f"kept 2 hand grades of 2 students and 1 comments ({out / manual.LEDGER}); given to a "
                     f"renamed row of the same student: {bob} -> bobjones_LATE_10202_2_00_toy.ipynb; 1 not "
                     f"applied (still in the ledger): the notebook changed since it was graded: {carol} q4"]
    rows = {r["file"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert {f: (r["q4"], r["final_points_earned"]) for f, r in rows.items()} == {
        alice: ("1.0", "2.0"), "bobjones_LATE_10202_2_00_toy.ipynb": ("0.5", "1.5"), carol: ("", "")}
    feedback = (out / "feedback" / f"{inputs.safe_stem(alice)}.md").read_text()
    assert "Comment: Good." in feedback and "**Total: 2.0 / 6.0 points**" in feedback
    assert "not included above" not in feedback                        # the total includes q4 now
    assert "Graded by your instructor (not included above): q4." in \
        (out / "feedback" / f"{inputs.safe_stem(carol)}.md").read_text()  # its grade was not given back
    # the page's cards show the hand grades they hold, not q4: __ / 1.0 on every card
    cards = {m.group(1): m.group(2) for m in re.finditer(
        r"<h2>(.*?)</h2><p class='meta'>.*?(q4: [^<]*)<", (out / "manual" / "q4.html").read_text())}
    assert cards == {alice: "q4: 1.0 / 1.0 (graded by hand)",
                     "bobjones_LATE_10202_2_00_toy.ipynb": "q4: 0.5 / 1.0 (graded by hand)",
                     carol: "q4: __ / 1.0"}
    assert manual.load_ledger(out) == ledger                           # kept as it was
    # grading Carol's new notebook replaces the old grade: nothing listed any more
    manual.merge(out, _fill(tmp_path / "g.csv", [["file", "q4"], [carol, "1"]]))
    assert manual.reapply(out)[0].startswith("kept 3 hand grades of 3 students and 1 comments (")


def _export_beside_alice(tmp_path, other: report.Result) -> tuple[Path, list[str], dict]:
    """Alice (ok, 2 points) and ``other`` graded into an output folder and exported to Canvas:
    (the folder, the lines printed, the grades imported)."""
    asg = assignment.load(str(hostile.FIXTURE))
    results = [report.Result(file="alicesmith_10101_20001_00_toy.ipynb", stem="a", status="ok",
                             question_points={"q1": 2.0}), other]
    out = tmp_path / "out"
    out.mkdir()
    report.write_all(out, asg, results, {"workers": 1, "mode": "weak"})
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(lms_samples.STUDENTS))
    lines = lms.export(out, book, export_partial=True)   # q4: not the hold tested
    return out, lines, lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())["grades"]


def test_a_wrong_week_upload_is_held_not_exported(tmp_path):
    wrong = "weekwrong_55555_4_03_attention.ipynb"
    out, lines, grades = _export_beside_alice(tmp_path, report.Result(
        file=wrong, stem="w", status="wrong notebook: this is 03_attention, not 00_toy",
        question_points={"q1": 0.0}))
    assert grades == {("10101", "4700"): "2"}
    assert lines[-2].startswith("HELD: 1 students") and lines[-1] == \
        f"  canvas id 55555: {wrong} (another week's notebook, not run)"
    assert "HELD: another week's notebook (1)" in (out / "report.html").read_text()
    assert (out / "feedback" / "w.md").read_text() == (
        f"# 00_toy: feedback for {wrong}\n\nNot graded: this notebook was not run (wrong notebook: this "
        "is 03_attention, not 00_toy). Hand in your 00_toy notebook.\n")


def test_a_row_with_flagged_code_is_held_not_exported(tmp_path):
    """A total the rules flagged waits for a person on every platform (the Gradescope
    zip holds it too): the gradebook cell stays as it is and the terminal says why."""
    flagged = "bobjones_10202_20002_00_toy.ipynb"
    _, lines, grades = _export_beside_alice(tmp_path, report.Result(
        file=flagged, stem="b", status="suspicious code: scaled_dot_product_attention",
        question_points={"q1": 2.0}))
    assert grades == {("10101", "4700"): "2"}
    assert lines[-2].startswith("HELD: 1 students") and \
        lines[-1] == f"  canvas id 10202: {flagged} (suspicious code: read it first)", lines


@pytest.mark.parametrize("status", ["unreadable notebook: not valid JSON", "unreadable notebook: empty file",
                                    "rejected upload: the zip would unpack to 1536 MB (at most 512 MB)"])
def test_an_unreadable_upload_is_held_not_exported_as_zero(tmp_path, status):
    """A failed upload is held, as another week's notebook is: it is as uncertain as that, so it is
    not exported to Canvas as 0."""
    broken = "bobjones_10202_20002_00_toy.ipynb"
    out, lines, grades = _export_beside_alice(tmp_path, report.Result(
        file=broken, stem="b", status=status, question_points={"q1": 0.0}))
    assert grades == {("10101", "4700"): "2"}
    assert lines[-2].startswith("HELD: 1 students") and \
        lines[-1] == f"  canvas id 10202: {broken} (an unreadable upload, not run)", lines
    page = (out / "report.html").read_text()
    assert "HELD: an unreadable upload (1)" in page and broken in page.split("HELD: an unreadable")[1]


def test_course_manual_is_all_or_nothing_and_remembers_the_gradebook(tmp_path):
    out = _graded_for_lms(tmp_path, {})
    book = tmp_path / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(lms_samples.STUDENTS).replace(b"Quiz 1 (4702)",
                                                                                  b"00 Toy b (4702)"))
    lms.remember(out, book, "4700")
    lms.export(out, book, "4700")
    alice = "alicesmith_10101_20001_00_toy.ipynb"
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = _fill(tmp_path / "bad.csv", [["file", "q4"], [alice, "1"], ["ghost.ipynb", "1"]])
    assert manual.main([str(out), str(bad)]) == 1
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert manual.main([str(out), str(bad), "--gradebook-column", "nothing like it"]) == 1
    good = _fill(tmp_path / "good.csv", [["file", "q4"], [alice, "1"]])
    assert manual.main([str(out), str(good), "--gradebook-column", "nothing like it"]) == 2
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert manual.main([str(out), str(good)]) == 0                 # the column of the grading run
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())
    assert got["grades"][("10101", "4700")] == "6"
    assert not [p for p in out.rglob("*.part")]


# ---------------------------------------------------------------- pages, feedback, manual.csv

def test_markdown_is_rendered_with_raw_html_escaped_and_no_script_links():
    out = handgrading.markdown_html("**q3.** Plot `q`.\n\n<script>alert(1)</script>\n\n"
                                    "[x](javascript:alert(1)) <img src=x onerror=alert(1)>")
    assert "<strong>q3.</strong> Plot <code>q</code>." in out
    assert "<script" not in out and "&lt;script&gt;" in out
    assert "<img" not in out and 'href="javascript' not in out


def test_the_page_shows_the_code_whole_and_the_error_a_cell_stopped_with(tmp_path):
    asg = assignment.load(str(hostile.FIXTURE))
    results = _results(tmp_path)
    results[1].cell_errors = [{"cell": 15, "kind": "error",
                               "error": "NameError: name 'PlotAtention' is not defined"}]
    report.write_all(tmp_path, asg, results, {"workers": 1, "mode": "weak"})
    page = (tmp_path / "manual" / "q4.html").read_text()
    assert "<details" not in page and "<p><strong>q4.</strong> Fill in the code.</p>" in page
    assert page.count("<pre class='code'>plt.plot(x)&lt;/pre&gt;&lt;script&gt;</pre>") == 3
    assert page.count("<pre class='error'>") == 1
    assert "<pre class='error'>NameError: name &#x27;PlotAtention&#x27; is not defined</pre>" in \
        page.split("HYPERLINK")[1].split("alicesmith")[0]                # in that student's answer only
    feedback = (tmp_path / "feedback" / f"{results[1].stem}.html").read_text()
    assert "Content-Security-Policy" in feedback and "<script" not in feedback
    assert "PlotAtention" in feedback                                   # the cell that stopped, listed


META = {"workers": 1, "mode": "weak"}


def test_a_regrade_prefills_manual_csv_and_an_untouched_one_goes_next_time(tmp_path):
    asg = assignment.load(str(hostile.FIXTURE))
    alice, bob = "alicesmith_10101_1_00_toy.ipynb", "bobjones_10202_2_00_toy.ipynb"
    out = tmp_path / "out"
    out.mkdir()
    report.write_all(out, asg, _week_results({alice: "a" * 64, bob: "b" * 64}), META)
    manual.merge(out, _fill(tmp_path / "f.csv", [["file", "q4", "comment"], [alice, "0.5", "=Nice"]]))
    assert handgrading.set_aside_filled(out) is None          # the untouched template: not kept
    report.write_all(out, asg, _week_results({alice: "a" * 64, bob: "c" * 64}), META)
    manual.reapply(out)
    assert manual.prefill(out) == [f"{out / 'manual.csv'} holds the 1 hand grades given back: fill in the "
                                   "rest"]
    rows = list(csv.reader((out / "manual.csv").open(newline="", encoding="utf-8")))
    assert rows == [["file", "id", "q4", "comment", "key", "sha256", "ledger"],
                    [alice, "10101", "0.5", "'=Nice", csvcells.file_key(alice), "a" * 16, "2"],
                    [bob, "10202", "", "", csvcells.file_key(bob), "c" * 16, "2"]]
    copy = tmp_path / "again.csv"                              # merged again as it is: nothing changes
    copy.write_bytes((out / "manual.csv").read_bytes())
    manual.merge(out, copy)
    assert "Comment: =Nice" in (out / "feedback" / f"{inputs.safe_stem(alice)}.md").read_text()
    assert handgrading.set_aside_filled(out) is None and not (out / "manual-1.csv").exists()
    # one a TA changed after it was pre-filled is set aside, never removed
    report.write_all(out, asg, _week_results({alice: "a" * 64, bob: "c" * 64}), META)
    manual.prefill(out)
    (out / "manual.csv").write_text((out / "manual.csv").read_text().replace(",,,", ",1,,"))
    assert handgrading.set_aside_filled(out) == out / "manual-1.csv"


@pytest.mark.parametrize("file, prefix", [
    ("alicesmith_10101_20001_00_toy.ipynb", "alicesmith_10101_20001"),
    ("bobjones_LATE_10202_20002_00_toy.ipynb", "bobjones_LATE_10202_20002"),
    ("leecarol_10303_556999_work.zip/a/00_toy.ipynb", "leecarol_10303_556999"),
    ("12345_10101_20001_00_toy.ipynb", None),          # Canvas would read 12345 as the user id
    ("Ann Lee_101_assignsubmission_file_/00_toy.ipynb", None), ("alice.ipynb", None),
])
def test_canvas_feedback_names_are_read_back_as_canvas_reads_them(file, prefix):
    from instructor import handback
    assert handback.canvas_prefix(file) == prefix
    if prefix:
        uid, aid = prefix.split("_")[-2:]
        assert handback.canvas_reads(prefix + "_feedback-2.html") == (uid, aid)


def test_the_feedback_page_escapes_whatever_a_submission_printed():
    from autograder import feedback
    md = (f"# 00_toy: feedback for {EVIL}.ipynb\n\n- test `t` (1.0 pt): **failed**\n\n"
          f"  ```\n  {EVIL}\n  ```\n\n- cell 3: `{EVIL}`\n\n{EVIL}\n\n[open](javascript:alert(1))\n")
    page = feedback.page_html(md, EVIL)
    parser = Tags()
    parser.feed(page)
    assert {t for t, _ in parser.tags} <= {"html", "head", "meta", "title", "style", "body", "h1", "ul", "li",
                                          "code", "pre", "strong", "p", "a"}
    assert not [a for _, attrs in parser.tags for a in attrs if a.lower().startswith("on")]
    assert 'href="javascript' not in page and "default-src 'none'" in page
    assert page.count("&lt;script&gt;window.__pwned=1&lt;/script&gt;") == 5


def test_a_copy_of_a_graded_notebook_under_another_students_name_gets_no_grade_of_it(tmp_path):
    """Alice re-uploads, Bob's new upload is a byte copy of Alice's graded notebook.
    Her grade and comment go to no one (listed), Bob's own old grade is listed too; a late upload of
    the same student's same bytes keeps its grade and is named on the summary line."""
    asg = assignment.load(str(hostile.FIXTURE))
    alice, bob, carol = ("alicesmith_10101_1_00_toy.ipynb", "bobjones_10202_2_00_toy.ipynb",
                         "leecarol_10303_3_00_toy.ipynb")
    out = tmp_path / "out"
    out.mkdir()
    report.write_all(out, asg, _week_results({alice: "a" * 64, bob: "b" * 64, carol: "c" * 64}), META)
    manual.merge(out, _fill(tmp_path / "f.csv", [["file", "q4", "comment"], [alice, "1", "Alice: see me"],
                                                  [bob, "0", ""], [carol, "0.5", ""]]))
    late_carol = "leecarol_LATE_10303_3_00_toy.ipynb"
    shutil.rmtree(out / "results")
    report.write_all(out, asg, _week_results({alice: "d" * 64, bob: "a" * 64, late_carol: "c" * 64}), META)
    lines = manual.reapply(out)
    rows = {r["file"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert (rows[bob]["q4"], rows[alice]["q4"], rows[late_carol]["q4"]) == ("", "", "0.5")
    assert "Alice: see me" not in (out / "feedback" / f"{inputs.safe_stem(bob)}.md").read_text()
    assert f"renamed row of the same student: {carol} -> {late_carol}" in lines[0]
    assert f"the notebook changed since it was graded: {alice} comment, {alice} q4, {bob} q4" in lines[0]
    from instructor.ledger import Ledger
    from instructor.mark.folder import Folder
    led = Ledger(out)
    folder = Folder(out)
    keys = folder.keys(led, "q4")
    given = {r.file: led.grade(led.answer(k)) for r, k in zip(folder.rows, keys, strict=True)}
    assert given == {alice: None, bob: None, late_carol: 0.5}     # course mark: Bob's answer waits to be read
