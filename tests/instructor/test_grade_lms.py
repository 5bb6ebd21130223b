"""The LMS and hand-grading workflow through the real commands, on one class of the toy assignment
named as Canvas's bulk download names it:

    python -m course grade SUBMISSIONS --assignment 00_toy --out OUT --gradebook gradebook.csv
    python -m course manual OUT filled.csv --gradebook gradebook.csv

Checked: the id column; another week's notebook is not run and says which it is; the hand-grading
page holds a figure from every submission (drawn by the grader at plt.show(), at display(fig), at the
end of a cell, or saved in the notebook for a skipped cell) and runs none of the students' HTML; the
filled-in CSV is checked, merged, and the Canvas import round-trips through a reader that follows
Canvas's importer. Where headless Chromium is installed, the report and the page are also opened
in it: the histogram's count labels are inside the picture and visible in a screenshot, every row
has its line in the table, every figure loads and no student script runs.
"""
from __future__ import annotations

import base64
import csv
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import browser
import hostile
import lms_samples
import pytest

from autograder import notebook_info

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e
EVIL = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=1\">"
ALICE, BOB, CAROL, DAVE = ("alicesmith_10101_20001_00_toy.ipynb", "bobjones_LATE_10202_20002_00_toy.ipynb",
                           "leecarol_10303_20003_00_toy.ipynb", "kimdave_10404_20004_00_toy.ipynb")
WRONG = "weekwrong_55555_20005_03_attention.ipynb"


def saved_png() -> bytes:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(2, 1), dpi=50)
    fig.gca().plot([0, 1], [0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=50)
    plt.close(fig)
    return buf.getvalue()


def with_answer(text: str, plot: str, *, skipped_png: bytes | None = None) -> bytes:
    """The toy solution whose q4 answer is ``text`` and a code cell that draws (``plot``: how)."""
    nb = hostile.load()
    nb["cells"][13]["source"] = text                # the markdown answer cell of q4
    src = ("import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(3, 2))\n"
           "ax.plot([0, 1, 2], [2, 0, 1])\nax.set_title('loss')\n" + plot + "\nprint('plotted')\n")
    cell = hostile.code_cell(src)
    if skipped_png is not None:
        cell["metadata"] = {"tags": ["otter_ignore"]}
        cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                            "data": {"image/png": base64.b64encode(skipped_png).decode(),
                                     "text/plain": "<Figure size 100x50 with 1 Axes>"}}]
    nb["cells"][14] = cell                          # the solution's own answer cell, inside the block
    return hostile.dump(nb)


def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO, env=dict(os.environ, OMP_NUM_THREADS="1"))


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("lms")
    os.chmod(root, 0o755)
    subs = root / "class"
    subs.mkdir()
    (subs / ALICE).write_bytes(with_answer("The loss falls *fast*, then flattens.", "plt.show()"))
    (subs / BOB).write_bytes(with_answer(EVIL, "ax.set_title('</title><script>x</script>')\ndisplay(fig)"))
    (subs / CAROL).write_bytes(with_answer("See the plot.", "plt.show()", skipped_png=saved_png()))
    (subs / DAVE).write_bytes(with_answer("Drawn, never shown.", "x = 1"))
    (subs / WRONG).write_bytes((REPO / "notebooks" / "03_attention.ipynb").read_bytes())
    book = root / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(lms_samples.STUDENTS + [("Kim, Dave", "10404", "S10404",
                                                                           "dkim", "Section B")]))
    out = root / "out"
    res = run("-m", "course", "grade", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out),
              "--workers", "2", "--no-progress", "--gradebook", str(book))
    rows = {}
    if (out / "grades.csv").exists():
        rows = {r["file"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    return {"root": root, "out": out, "result": res, "rows": rows, "book": book}


def test_grading_finishes_and_writes_the_canvas_import(batch):
    res = batch["result"]
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    # nothing is graded by hand yet: every row is held, none exported with its automatic points only
    assert "canvas_import.csv: 0 students' column '00 Toy (4700)' filled in" in res.stdout
    assert "4 rows are held: their hand grading is not done" in res.stdout
    assert f"  canvas id 10101: {ALICE} (hand grading not done: q4)" in res.stdout
    assert f"  canvas id 55555: {WRONG} (another week's notebook, not run)" in res.stdout
    assert "hand grading: open" in res.stdout


def test_rows_carry_the_canvas_id(batch):
    assert {f: r["id"] for f, r in batch["rows"].items()} == {
        ALICE: "10101", BOB: "10202", CAROL: "10303", DAVE: "10404", WRONG: "55555"}
    for f in (ALICE, BOB, CAROL, DAVE):
        row = batch["rows"][f]
        assert (row["grading_status"], row["total_points_earned"], row["q4"], row["final_points_earned"]) == \
            ("ok", "5.0", "", "")


def test_another_weeks_notebook_is_named_and_not_run(batch):
    row = batch["rows"][WRONG]
    assert row["grading_status"] == "wrong notebook: this is 03_attention, not 00_toy"
    assert (row["q1"], row["q2"], row["q3"], row["total_points_earned"]) == ("0.0", "0.0", "0.0", "0.0")
    res = json.loads((batch["out"] / "results" / "weekwrong_55555_20005_03_attention.json").read_text())
    assert res["output"] == "" and res["figures"] == []                 # its cells never ran
    assert all(not t["passed"] for t in res["tests"])


def _sections(page: str) -> dict[str, str]:
    parts = re.split(r"<section class='answer'", page)[1:]
    return {re.search(r"<h2>(.*?)</h2>", p).group(1): p for p in parts}


def _pngs(section: str) -> list[bytes]:
    found = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", section)
    return [base64.b64decode(b) for b in found]


def _size(data: bytes) -> tuple[int, int]:
    return struct.unpack(">II", data[16:24])


def test_the_hand_grading_page_holds_a_figure_from_every_submission(batch):
    page = (batch["out"] / "manual" / "q4.html").read_text(encoding="utf-8")
    sections = _sections(page)
    assert sorted(sections) == sorted([ALICE, BOB, CAROL, DAVE, WRONG])
    for f in (ALICE, BOB, DAVE):                       # drawn by the grader: 3 x 2 inches at 72 dpi
        figures = _pngs(sections[f])
        assert len(figures) == 1, f
        assert notebook_info.check_png(figures[0]) is None and _size(figures[0]) == (216, 144), f
        assert "<pre>plotted\n</pre>" in sections[f], f
    (saved,) = _pngs(sections[CAROL])                  # skipped cell: as saved in the notebook
    assert saved == saved_png() and "not run by the grader (otter_ignore)" in sections[CAROL]
    assert _pngs(sections[WRONG]) == [] and "wrong notebook" in sections[WRONG]
    assert "The loss falls *fast*, then flattens." in sections[ALICE]
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in sections[BOB]
    assert "<script" not in page and "onerror=" not in page.replace("onerror=&quot;", "")
    figures = sorted(p.relative_to(batch["out"]).as_posix()
                     for p in (batch["out"] / "figures").rglob("*.png"))
    assert figures == ["figures/alicesmith_10101_20001_00_toy/cell015-1.png",
                       "figures/bobjones_LATE_10202_20002_00_toy/cell015-1.png",
                       "figures/kimdave_10404_20004_00_toy/cell015-1.png",
                       "figures/leecarol_10303_20003_00_toy/saved-cell015-1.png"]


def test_course_manual_merges_the_filled_csv_and_refreshes_the_canvas_import(batch, tmp_path):
    out, book = batch["out"], batch["book"]
    rows = list(csv.reader((out / "manual.csv").open(encoding="utf-8")))
    assert rows[0] == ["file", "id", "q4", "comment", "key", "sha256", "ledger"] and len(rows) == 6
    points = {ALICE: "1", BOB: "0.5", CAROL: "1", DAVE: "0", WRONG: "0"}
    mistake = [rows[0]] + [[r[0], r[1], "2" if r[0] == ALICE else points[r[0]], ""] for r in rows[1:]]
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(",".join(r) for r in mistake) + "\n")
    before = (out / "grades.csv").read_bytes()
    res = run("-m", "course", "manual", str(out), str(bad))
    assert res.returncode == 1 and "q4 = 2 is not between 0 and 1.0" in res.stderr
    assert (out / "grades.csv").read_bytes() == before
    filled = tmp_path / "filled.csv"
    filled.write_text("\n".join(",".join([r[0], r[1], points[r[0]], "Nice." if r[0] == ALICE else ""])
                                for r in rows[1:]).join([",".join(rows[0]) + "\n", "\n"]))
    res = run("-m", "course", "manual", str(out), str(filled), "--gradebook", str(book))
    assert res.returncode == 0, res.stderr
    assert "5 of 5 rows have every hand-graded question (q4)" in res.stdout
    grades = {r["file"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert {f: (r["q4"], r["final_points_earned"]) for f, r in grades.items()} == {
        ALICE: ("1.0", "6.0"), BOB: ("0.5", "5.5"), CAROL: ("1.0", "6.0"), DAVE: ("0.0", "5.0"),
        WRONG: ("0.0", "0.0")}
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())
    assert got["assignments"] == {"4700": "00 Toy (4700)"} and got["points"] == {"4700": "6.00"}
    assert got["grades"] == {("10101", "4700"): "6", ("10202", "4700"): "5.5", ("10303", "4700"): "6",
                             ("10404", "4700"): "5"}          # 55555, another week's notebook: held
    feedback = (out / "feedback" / "alicesmith_10101_20001_00_toy.md").read_text()
    assert "- q4: 1.0 / 1.0" in feedback and "Comment: Nice." in feedback


# ---------------------------------------------------------------- in a browser

def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([browser.check(), "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--no-first-run", "--disable-dev-shm-usage",
                           "--force-device-scale-factor=1",
                           f"--user-data-dir={tmp / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)


PROBE_REPORT = """<script>
window.addEventListener('load', function () {
  var svg = document.querySelector('svg.histogram').getBoundingClientRect();
  var labels = Array.from(document.querySelectorAll('svg.histogram text')).map(function (t) {
    var r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom};
  });
  var rows = document.querySelectorAll('table.rows tr').length;
  var out = document.createElement('pre'); out.id = 'probe';
  out.textContent = JSON.stringify({svg: {left: svg.left, top: svg.top, right: svg.right,
                                          bottom: svg.bottom}, labels: labels, rows: rows});
  document.body.appendChild(out);
});
</script>"""

PROBE_PAGE = """<script>
window.addEventListener('load', function () {
  var imgs = Array.from(document.images);
  var out = document.createElement('pre'); out.id = 'probe';
  out.textContent = JSON.stringify({images: imgs.length,
                                    loaded: imgs.filter(function (i) { return i.naturalWidth > 0; }).length,
                                    pwned: typeof window.__pwned !== 'undefined'});
  document.body.appendChild(out);
});
</script>"""


WINDOW = "--window-size=1200,1600"


def _probe(tmp: Path, page: Path) -> dict:
    res = chromium(tmp, WINDOW, "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    m = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    assert m, res.stderr[-2000:]
    import html
    return json.loads(html.unescape(m.group(1)))


@browser.needed
def test_report_in_chromium_labels_inside_the_chart_and_a_line_per_row(batch, tmp_path):
    from PIL import Image
    page = tmp_path / "report.html"
    page.write_text((batch["out"] / "report.html").read_text(encoding="utf-8").replace(
        "</body>", PROBE_REPORT + "</body>"), encoding="utf-8")
    probe = _probe(tmp_path, page)
    svg = probe["svg"]
    counts = [lb for lb in probe["labels"] if "%" not in lb["text"]]
    assert [lb["text"] for lb in counts] == ["1", "0", "0", "0", "0", "0", "0", "0", "0", "4"]
    for lb in probe["labels"]:
        assert svg["left"] <= lb["left"] and lb["right"] <= svg["right"], lb
        assert svg["top"] <= lb["top"] and lb["bottom"] <= svg["bottom"], lb
    assert probe["rows"] == 1 + len(batch["rows"])
    # the screenshot shows the tallest bar's label: dark pixels where the browser put it
    shot = tmp_path / "report.png"
    chromium(tmp_path, WINDOW, f"--screenshot={shot}", page.as_uri())
    image = Image.open(shot).convert("L")
    assert image.size == (1200, 1600) and svg["bottom"] < 1600
    top = max(counts, key=lambda lb: int(lb["text"]))
    box = tuple(int(v) for v in (top["left"], top["top"], top["right"] + 1, top["bottom"] + 1))
    assert image.crop(box).getextrema()[0] < 100, box            # text drawn there, not clipped away
    shutil.copy(shot, batch["out"] / "report-screenshot.png")   # for a person to look at


@browser.needed
def test_hand_grading_page_in_chromium_shows_every_figure_and_runs_no_student_script(batch, tmp_path):
    original = (batch["out"] / "manual" / "q4.html").read_text(encoding="utf-8")
    # without the page's Content-Security-Policy, so that the probe runs: escaping alone must hold
    bare = re.sub(r"<meta http-equiv='Content-Security-Policy'[^>]*>", "", original)
    page = tmp_path / "q4.html"
    page.write_text(bare.replace("</body>", PROBE_PAGE + "</body>"), encoding="utf-8")
    probe = _probe(tmp_path, page)
    assert probe == {"images": 4, "loaded": 4, "pwned": False}
    shot = tmp_path / "q4.png"
    chromium(tmp_path, "--window-size=1300,1000", f"--screenshot={shot}",
             (batch["out"] / "manual" / "q4.html").as_uri())
    assert shot.stat().st_size > 10_000


# ---------------------------------------------------------------- a real notebook

BUILT = REPO / "autograder" / "build" / "03_attention-solution.ipynb"


@pytest.mark.skipif(not BUILT.exists(), reason="run `course build` first")
def test_a_real_notebooks_plot_reaches_the_page(tmp_path):
    """03_attention's solution: q3's three PlotAttention panels, drawn by the grader."""
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(BUILT, subs / "garciamaria_10234_556677_03_attention.ipynb")
    shutil.copy(REPO / "notebooks" / "02_with_position.ipynb", subs / "nguyenan_10311_556702_02.ipynb")
    out = tmp_path / "out"
    res = run("-m", "autograder", str(subs), "--assignment", "03_attention", "--out", str(out),
              "--workers", "2", "--no-progress")
    assert res.returncode == 0, res.stderr[-3000:]
    rows = {r["file"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert rows["garciamaria_10234_556677_03_attention.ipynb"]["grading_status"] == "ok"
    assert rows["nguyenan_10311_556702_02.ipynb"]["grading_status"] == \
        "wrong notebook: this is 02_with_position, not 03_attention"
    sections = _sections((out / "manual" / "q3.html").read_text(encoding="utf-8"))
    (figure,) = _pngs(sections["garciamaria_10234_556677_03_attention.ipynb"])
    width, height = _size(figure)
    assert width == 11 * 72 and abs(height - 3.8 * 72) < 1          # figsize=(11, 3.8), 72 dpi


# ---------------------------------------------------------------- hostile uploads and names

SOL_ROW, BLANK_ROW = "honestsol_10101_5001_00_toy.ipynb", "honestblank_10202_5002_00_toy.ipynb"
EVE_ZIP = "eve_10303_5003_upload.zip"
CR_STATUS = "carol_10505_5005_00_toy.ipynb"
FORMULA, QUOTED = "=e_10606_1_a.ipynb", "'=e_10606_1_a.ipynb"
PAGE_HOG = "dave_10707_5007_00_toy.ipynb"
SLOW = "aaa_slow_10808_5008_00_toy.ipynb"           # read first: the honest rows come after it
MOODLE_ALICE = "Alice Jones_102_assignsubmission_file_/00_toy.ipynb"
MOODLE_EVE = "Eve Evil_103_assignsubmission_file_/work.zip"
# a cell that finds the runner's message channel and forges a fatal message with a bare \r in it
FORGED_FATAL = ("import gc\nfor o in gc.get_objects():\n    if type(o).__name__ == '_Channel':\n"
                "        o.send(t='fatal', reason='see teacher\\rX')\n")


def png_of(width: int, height: int, noise: bool = False) -> bytes:
    """A valid RGB PNG; ``noise``: random pixels (it does not compress)."""
    raw = b"".join(b"\0" + (os.urandom(3 * width) if noise else bytes(3 * width)) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 1 if noise else 9)) + chunk(b"IEND", b""))


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def page_hog() -> bytes:
    """The solution whose q4 answer is a skipped cell with saved images: two of 4000 x 4000 pixels
    (49 KB each as PNG, 48 MB each once decoded) and four of 700 x 700 random pixels (1.4 MB each)."""
    nb = hostile.load()
    cell = hostile.code_cell("train()")
    cell["metadata"] = {"tags": ["otter_ignore"]}
    images = [png_of(4000, 4000)] * 2 + [png_of(700, 700, noise=True) for _ in range(4)]
    cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                        "data": {"image/png": base64.b64encode(p).decode()}} for p in images]
    nb["cells"][14] = cell
    return hostile.dump(nb)


def slow_to_read() -> bytes:
    """24 MB of empty cells: 35 s or more in a notebook reader that is not bounded in time, which
    would cost every notebook read after it its hand-grading answers and week check."""
    return ('{"cells":[' + ",".join(["{}"] * (8 * 2**20)) + "]}").encode()


def zip_bytes(members: list[tuple[str, bytes]]) -> bytes:
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def fill_by_column(manual_csv: Path, dest: Path, points: dict[str, str]) -> Path:
    """What an instructor does in a spreadsheet: q4 of each row (by its file cell) filled in."""
    with open(manual_csv, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    col = rows[0].index("q4")
    for r in rows[1:]:
        r[col] = points.get(r[0], "0")
    with open(dest, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return dest


REDTEAM_STUDENTS = [("Sol, Honest", "10101", "", "", "A"), ("Blank, Honest", "10202", "", "", "A"),
                    ("Evil, Points Possible", "10303", "", "", "A"),       # A3: a student so named
                    ("Friend, Eve's", "10404", "", "", "A"), ("Carol", "10505", "", "", "A")]


def grade_folder(subs: list[Path], out: Path, *extra: str) -> subprocess.CompletedProcess:
    return run("-m", "course", "grade", *map(str, subs), "--assignment", str(hostile.FIXTURE),
               "--out", str(out), "--workers", "2", "--no-progress", *extra)


def grade_rows(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["file"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def redteam(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("redteam13")
    os.chmod(root, 0o755)
    sol, blank = hostile.SOLUTION.read_bytes(), hostile.BLANK.read_bytes()
    canvas, moodle, alone = root / "canvas", root / "moodle", root / "alone"
    for d in (canvas, moodle / MOODLE_ALICE.split("/")[0], moodle / MOODLE_EVE.split("/")[0], alone):
        d.mkdir(parents=True)
    for folder in (canvas, alone):
        (folder / SOL_ROW).write_bytes(sol)
        (folder / BLANK_ROW).write_bytes(blank)
    # A2 and A4: Eve's own zip in the extracted download names its members as Canvas names rows:
    # a classmate who handed in nothing, the blank classmate, and the correct one's exact name;
    # A1: a member name with a bare \r
    (canvas / EVE_ZIP).write_bytes(zip_bytes([("friend_10404_9999_00_toy.ipynb", sol),
                                              ("honestblank_10202_7777_00_toy.ipynb", sol),
                                              (SOL_ROW, blank), ("part2\r.ipynb", blank)]))
    (canvas / CR_STATUS).write_bytes(hostile.with_cells(after=[FORGED_FATAL], base=hostile.BLANK))  # A1
    (canvas / FORMULA).write_bytes(blank)                                                      # A5
    (canvas / QUOTED).write_bytes(blank)
    (canvas / PAGE_HOG).write_bytes(page_hog())                                                # A8
    (canvas / SLOW).write_bytes(slow_to_read())                                                # A7
    (moodle / MOODLE_ALICE).write_bytes(sol)
    (moodle / MOODLE_EVE).write_bytes(zip_bytes([(MOODLE_ALICE, blank),                        # A4
                                                 ("Someone_104_assignsubmission_file_/00_toy.ipynb", sol)]))
    book = root / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(REDTEAM_STUDENTS))
    worksheet = root / "worksheet.csv"
    worksheet.write_bytes(lms_samples.moodle_worksheet([("102", "Alice Jones"), ("103", "Eve Evil"),
                                                        ("104", "Someone")]))
    import time
    t0 = time.monotonic()
    res = grade_folder([canvas, moodle], root / "out", "--export-partial", "--gradebook", str(book))
    seconds = time.monotonic() - t0
    res_alone = grade_folder([alone], root / "alone_out")
    return {"root": root, "out": root / "out", "result": res, "seconds": seconds, "book": book,
            "worksheet": worksheet, "rows": grade_rows(root / "out") if res.returncode == 0 else {},
            "alone": grade_rows(root / "alone_out") if res_alone.returncode == 0 else {}}


def _score(row: dict) -> list[str]:
    return [row[k] for k in ("q1", "q2", "q3", "total_points_earned", "grading_status", "id")]


def test_redteam_batch_finishes_and_honest_rows_grade_as_alone(redteam):
    res = redteam["result"]
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    rows, alone = redteam["rows"], redteam["alone"]
    assert [_score(alone[f]) for f in (SOL_ROW, BLANK_ROW)] == [
        ["2.0", "2.0", "1.0", "5.0", "ok", "10101"], ["0.0", "0.0", "0.0", "0.0", "ok", "10202"]]
    for f in (SOL_ROW, BLANK_ROW):
        assert _score(rows[f]) == _score(alone[f]), f
    assert not [f for f in rows if "name clash" in f]


def test_a1_a_bare_cr_in_a_status_or_a_name_stays_inside_its_cell(redteam):
    out = redteam["out"]
    raw = (out / "grades.csv").read_bytes()
    assert b"\r" not in raw.replace(b"\r\n", b"")          # no bare \r anywhere
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    assert {len(r) for r in table} == {len(table[0])}
    rows = redteam["rows"]
    assert rows[CR_STATUS]["grading_status"] == "error reported by the notebook's process: see teacher?X"
    assert rows[CR_STATUS]["total_points_earned"] == "0.0"
    assert rows[f"{EVE_ZIP}/part2?.ipynb"]["id"] == "10303"
    # the unmodified manual.csv merges (nothing typed, nothing changed), then a filled one merges
    copy = redteam["root"] / "untouched.csv"
    shutil.copy(out / "manual.csv", copy)
    res = run("-m", "course", "manual", str(out), str(copy), "--export-partial")
    assert res.returncode == 0, res.stderr


def test_a2_a4_nothing_in_a_students_zip_names_a_classmates_row(redteam):
    rows = redteam["rows"]
    eve = {f: r["id"] for f, r in rows.items() if f.startswith(EVE_ZIP + "/")}
    assert eve == {f"{EVE_ZIP}/friend_10404_9999_00_toy.ipynb": "10303",
                   f"{EVE_ZIP}/honestblank_10202_7777_00_toy.ipynb": "10303",
                   f"{EVE_ZIP}/{SOL_ROW}": "10303", f"{EVE_ZIP}/part2?.ipynb": "10303"}
    assert not [f for f, r in rows.items() if r["id"] == "10404"]
    assert [f for f, r in rows.items() if r["id"] == "10202"] == [BLANK_ROW]
    assert [f for f, r in rows.items() if r["id"] == "10101"] == [SOL_ROW]
    # Moodle: Eve's zip holds Alice's exact path; Alice is graded, Eve's rows are Eve's
    assert _score(rows[MOODLE_ALICE])[:5] == _score(redteam["alone"][SOL_ROW])[:5]
    assert rows[MOODLE_ALICE]["id"] == "102"
    assert {rows[f"{MOODLE_EVE}/{MOODLE_ALICE}"]["id"],
            rows[f"{MOODLE_EVE}/Someone_104_assignsubmission_file_/00_toy.ipynb"]["id"]} == {"103"}


def test_a3_a_student_named_points_possible_gets_a_grade(redteam):
    got = lms_samples.canvas_import((redteam["out"] / "canvas_import.csv").read_bytes())
    assert got["points"] == {"4700": "6.00"}
    assert got["grades"][("10101", "4700")] == "5" and got["grades"][("10202", "4700")] == "0"
    assert ("10303", "4700") not in got["grades"]            # Eve: rows of 5 and 0 points, held
    assert "  canvas id 10303: eve_10303_5003_upload.zip/" in redteam["result"].stdout
    assert ("10404", "4700") not in got["grades"]            # submitted nothing: not filled in
    assert "not in the gradebook, left out: 10303" not in redteam["result"].stdout


def test_a5_names_that_differ_by_a_quote_merge_apart_and_the_moodle_import_follows(redteam, tmp_path):
    out = redteam["out"]
    rows = list(csv.reader((out / "manual.csv").open(newline="", encoding="utf-8")))
    files = [r[0] for r in rows[1:]]
    assert "'" + FORMULA in files and "'" + QUOTED in files      # two cells, two rows
    points = {"'" + FORMULA: "1", "'" + QUOTED: "0.5", SOL_ROW: "1", MOODLE_ALICE: "1"}
    filled = fill_by_column(out / "manual.csv", tmp_path / "filled.csv", points)
    res = run("-m", "course", "manual", str(out), str(filled), "--export-partial",
              "--gradebook", str(redteam["worksheet"]))
    assert res.returncode == 0, res.stderr
    merged = grade_rows(out)
    assert (merged["'" + FORMULA]["q4"], merged["'" + QUOTED]["q4"]) == ("1.0", "0.5")
    assert merged[SOL_ROW]["final_points_earned"] == "6.0"
    moodle = list(csv.DictReader(io.StringIO((out / "moodle_import.csv").read_text(encoding="utf-8"))))
    assert [(r["Identifier"], r["Grade"]) for r in moodle] == [
        ("Participant 102", "6"), ("Participant 103", ""), ("Participant 104", "")]
    assert "  moodle id 103: " in res.stdout                # Eve's rows (5 and 0 points) are held


def test_a7_a_notebook_slow_to_read_costs_only_its_own_row(redteam):
    sections = _sections((redteam["out"] / "manual" / "q4.html").read_text(encoding="utf-8"))
    for f in (SOL_ROW, BLANK_ROW, MOODLE_ALICE, PAGE_HOG):
        assert "No answer found" not in sections[f], f
    assert "No answer found (not inspected" in sections[SLOW]
    assert redteam["seconds"] < 60, redteam["seconds"]


def test_a8_what_one_answer_embeds_in_a_page_is_capped(redteam):
    sections = _sections((redteam["out"] / "manual" / "q4.html").read_text(encoding="utf-8"))
    images = _pngs(sections[PAGE_HOG])
    assert 1 <= len(images) and sum(len(p) for p in images) <= 2 * 2**20
    assert all(w * h <= 4_000_000 for w, h in map(_size, images))
    assert sections[PAGE_HOG].count("an image of 4000 x 4000 pixels was left out") == 2
    assert "this answer's images are over 2 MB on this page" in sections[PAGE_HOG]


# ---------------------------------------------------------------- odd names and guesses, real commands

LATIN1 = os.fsdecode(b"ren\xe9_10909_5009_00_toy.ipynb")       # not UTF-8: a lone surrogate in Python
LATIN1_ROW = "ren\ufffd_10909_5009_00_toy.ipynb"
GUESSES = "mallory_10404_6004_guesses.zip"
HOARD = ("eve_10303_6003_a.zip", "eve_10303_6013_b.zip")
RT3_STUDENTS = [("Aaron\u2028A", "10999", "", "", "A"), ("Nel\u0085N", "10998", "", "", "A")] \
    + REDTEAM_STUDENTS + [("Ren", "10909", "", "", "A")]


@pytest.fixture(scope="module")
def redteam3(tmp_path_factory) -> dict:
    """An extracted folder (the honest solution and blank, a Latin-1 file name) and a Canvas bulk
    download given as a zip: Eve's two uploads of 5 notebooks each (A4), Mallory's upload of two
    guesses, a solution and a blank (A6); the gradebook's first students have U+2028 and U+0085 in
    their names (A7)."""
    root = tmp_path_factory.mktemp("redteam3")
    os.chmod(root, 0o755)
    sol, blank = hostile.SOLUTION.read_bytes(), hostile.BLANK.read_bytes()
    folder, alone = root / "class", root / "alone"
    for d in (folder, alone):
        d.mkdir()
        (d / SOL_ROW).write_bytes(sol)
        (d / BLANK_ROW).write_bytes(blank)
    (folder / LATIN1).write_bytes(sol)
    uploads = [(name, zip_bytes([(f"part{k}.ipynb", blank) for k in range(5)])) for name in HOARD]
    bulk = root / "submissions.zip"
    guesses = zip_bytes([("guess1.ipynb", sol), ("guess2.ipynb", blank)])
    bulk.write_bytes(zip_bytes([*uploads, (GUESSES, guesses)]))
    book = root / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(RT3_STUDENTS, manual_posting=False))
    res = grade_folder([folder, bulk], root / "out", "--export-partial", "--gradebook", str(book))
    res_alone = grade_folder([alone], root / "alone_out")
    return {"root": root, "out": root / "out", "result": res, "book": book,
            "rows": grade_rows(root / "out") if res.returncode == 0 else {},
            "alone": grade_rows(root / "alone_out") if res_alone.returncode == 0 else {}}


def test_rt3_batch_finishes_and_honest_rows_grade_as_alone(redteam3):
    res = redteam3["result"]
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    rows, alone = redteam3["rows"], redteam3["alone"]
    assert [_score(alone[f]) for f in (SOL_ROW, BLANK_ROW)] == [
        ["2.0", "2.0", "1.0", "5.0", "ok", "10101"], ["0.0", "0.0", "0.0", "0.0", "ok", "10202"]]
    for f in (SOL_ROW, BLANK_ROW):
        assert _score(rows[f]) == _score(alone[f]), f
    got = lms_samples.canvas_import((redteam3["out"] / "canvas_import.csv").read_bytes())
    assert got["grades"][("10101", "4700")] == "5" and got["grades"][("10202", "4700")] == "0"


def test_rt3_a1_a_name_that_is_not_utf8_is_graded_and_merged_by_course_manual(redteam3, tmp_path):
    out, rows = redteam3["out"], redteam3["rows"]
    assert _score(rows[LATIN1_ROW]) == ["2.0", "2.0", "1.0", "5.0", "ok", "10909"]
    filled = fill_by_column(out / "manual.csv", tmp_path / "filled.csv", {LATIN1_ROW: "1", SOL_ROW: "0.5"})
    res = run("-m", "course", "manual", str(out), str(filled), "--export-partial",
              "--gradebook", str(redteam3["book"]))
    assert res.returncode == 0, res.stdout + res.stderr
    merged = grade_rows(out)
    assert (merged[LATIN1_ROW]["q4"], merged[LATIN1_ROW]["final_points_earned"]) == ("1.0", "6.0")
    assert merged[SOL_ROW]["final_points_earned"] == "5.5"
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())
    assert got["grades"][("10909", "4700")] == "6"


def test_rt3_a4_one_student_runs_at_most_three_notebooks(redteam3):
    eve = {f: r for f, r in redteam3["rows"].items() if r["id"] == "10303"}
    assert len(eve) == 10
    ran = sorted(f for f, r in eve.items() if r["grading_status"] == "ok")
    assert ran == [f"{HOARD[0]}/part{k}.ipynb" for k in range(3)]
    assert {r["grading_status"] for f, r in eve.items() if f not in ran} == {
        "not graded: more than 3 notebooks from one student (10 in all; the first 3 by name were "
        "graded, grade another one alone)"}


def test_rt3_a6_a_student_whose_rows_differ_is_held_not_best_of_n(redteam3):
    got = lms_samples.canvas_import((redteam3["out"] / "canvas_import.csv").read_bytes())
    assert ("10404", "4700") not in got["grades"] and ("10303", "4700") not in got["grades"]
    out = redteam3["result"].stdout
    assert "HELD: 2 students have several rows whose points differ" in out
    assert (f"  canvas id 10404: {GUESSES}/guess1.ipynb (5 points); {GUESSES}/guess2.ipynb (0 points)"
            in out)
    assert "canvas id 10303: " in out and "7 more notebooks not graded (over 3 from one student)" in out
    page = (redteam3["out"] / "report.html").read_text(encoding="utf-8")
    assert "Students with several rows (2)" in page


def test_rt3_a7_a_line_separator_in_a_students_name_keeps_the_gradebook(redteam3):
    assert "neither a Canvas gradebook" not in redteam3["result"].stderr
    assert "canvas_import.csv: 3 students' column '00 Toy (4700)' filled in" in redteam3["result"].stdout


# ---------------------------------------------------------------- a week without surprises

def _toy_gradebook_needing_a_column(students) -> bytes:
    """A Canvas gradebook with two columns that name 00_toy: course grade needs --gradebook-column."""
    return lms_samples.canvas_gradebook(students).replace(b"Quiz 1 (4702)", b"00 Toy retake (4702)")


def _files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def week(tmp_path_factory) -> dict:
    """A Canvas class (on time, late, another week's notebook) graded with a gradebook that needs
    --gradebook-column; the TA fills a copy of manual.csv and merges it without naming the gradebook."""
    root = tmp_path_factory.mktemp("week")
    os.chmod(root, 0o755)
    asg = root / "00_toy"
    shutil.copytree(hostile.FIXTURE, asg)
    subs = root / "class"
    subs.mkdir()
    (subs / ALICE).write_bytes(with_answer("The loss falls fast.", "plt.show()"))
    (subs / BOB).write_bytes(with_answer("It goes down.", "plt.show()"))
    (subs / DAVE).write_bytes(with_answer("Drawn, never shown.", "x = 1"))
    (subs / WRONG).write_bytes((REPO / "notebooks" / "03_attention.ipynb").read_bytes())
    book = root / "gradebook.csv"
    book.write_bytes(_toy_gradebook_needing_a_column(lms_samples.STUDENTS + [
        ("Kim, Dave", "10404", "S10404", "dkim", "Section B")]))
    out = root / "out"

    def grade(*extra: str) -> subprocess.CompletedProcess:
        return run("-m", "course", "grade", str(subs), "--assignment", str(asg), "--out", str(out),
                   "--workers", "2", "--no-progress", "--no-similarity", *extra)

    without = grade("--gradebook", str(book))
    first = grade("--gradebook", str(book), "--gradebook-column", "4700")
    filled = root / "filled-by-the-ta.csv"
    fill_by_column(out / "manual.csv", filled, {ALICE: "1", BOB: "0.5", DAVE: "0", WRONG: "0"})
    with open(filled, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    rows[[r[0] for r in rows].index(ALICE)][rows[0].index("comment")] = "Clear plot."
    with open(filled, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    merged = run("-m", "course", "manual", str(out), str(filled))
    return {"root": root, "asg": asg, "subs": subs, "out": out, "book": book, "grade": grade,
            "without": without, "first": first, "merged": merged}


def test_week_the_wrong_week_upload_is_held_and_its_feedback_says_it_was_not_run(week):
    res = week["first"]
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "HELD: 4 students" in res.stdout          # and the 3 whose hand grading is not done
    assert f"  canvas id 55555: {WRONG} (another week's notebook, not run)" in res.stdout
    assert "canvas_import.csv: 0 students' column '00 Toy (4700)' filled in" in res.stdout
    got = lms_samples.canvas_import((week["out"] / "canvas_import.csv").read_bytes())
    assert ("55555", "4700") not in got["grades"]                  # the gradebook cell stays as it is
    page = (week["out"] / "report.html").read_text(encoding="utf-8")
    assert "HELD: another week's notebook (1)" in page and WRONG in page.split("HELD: another")[1]
    feedback = (week["out"] / "feedback" / "weekwrong_55555_20005_03_attention.md").read_text()
    assert "was not run" in feedback and "Hand in your 00_toy notebook" in feedback
    assert "failed" not in feedback and "Hint" not in feedback and "##" not in feedback


def test_week_course_manual_remembers_the_gradebook_and_its_column(week):
    assert week["without"].returncode == 2 and "matches several" in week["without"].stderr
    res = week["merged"]
    assert res.returncode == 0, res.stdout + res.stderr
    assert "canvas_import.csv: 3 students' column '00 Toy (4700)' filled in" in res.stdout
    got = lms_samples.canvas_import((week["out"] / "canvas_import.csv").read_bytes())
    assert got["grades"] == {("10101", "4700"): "6", ("10202", "4700"): "5.5", ("10404", "4700"): "5"}
    feedback = (week["out"] / "feedback" / "weekwrong_55555_20005_03_attention.md").read_text()
    assert "Graded by your instructor" not in feedback                 # it was not run, nothing more


def test_week_course_manual_with_a_mistake_changes_nothing(week, tmp_path):
    out = week["out"]
    bad = fill_by_column(out / "manual.csv", tmp_path / "bad.csv", {ALICE: "0.5", BOB: "7"})
    before = _files_of(out)
    res = run("-m", "course", "manual", str(out), str(bad))
    assert res.returncode == 1 and "q4 = 7 is not between 0 and 1.0" in res.stderr
    assert "nothing in" in res.stderr and _files_of(out) == before
    moved = tmp_path / "gone.csv"                     # a gradebook that is not there any more
    res = run("-m", "course", "manual", str(out), str(fill_by_column(out / "manual.csv", tmp_path / "ok.csv",
                                                                     {ALICE: "0.5"})),
              "--export-partial", "--gradebook", str(moved))
    assert res.returncode == 2 and _files_of(out) == before


def _canvas_reupload_match(name: str) -> tuple[str, str] | None:
    """What Canvas's Re-Upload Submissions reads in a file's name (canvas-lms,
    Assignment#infer_comment_context_from_filename): the base name split at '_', the first two parts
    that are all digits, as (user id, attachment id)."""
    digits = [p for p in Path(name).name.split("_") if re.fullmatch(r"\d+", p)][:2]
    return (digits[0], digits[1]) if len(digits) == 2 else None


def test_week_feedback_reaches_canvas_with_the_final_total(week):
    out = week["out"]
    assert f"{out / 'canvas_feedback.zip'}: 3 files for 3 students," in week["merged"].stdout
    # the student held for another week's notebook gets their feedback once the instructor decides
    assert (f"HELD from canvas_feedback.zip: the feedback of 1 student whose grade is held (see HELD) is "
            f"left out, to hand back once you decide it: {WRONG}") in week["merged"].stdout
    with zipfile.ZipFile(out / "canvas_feedback.zip") as z:
        files = {n: z.read(n).decode() for n in z.namelist()}
    # each file goes to the student and the attachment of the row it is about
    assert {n: _canvas_reupload_match(n) for n in files} == {
        "alicesmith_10101_20001_feedback.html": ("10101", "20001"),
        "bobjones_LATE_10202_20002_feedback.html": ("10202", "20002"),
        "kimdave_10404_20004_feedback.html": ("10404", "20004")}
    alice = files["alicesmith_10101_20001_feedback.html"]
    assert alice == (out / "feedback" / "alicesmith_10101_20001_00_toy.html").read_text()
    assert "<strong>Total: 6.0 / 6.0 points</strong> (automatically graded 5.0 / 5.0; graded by hand " \
        "1.0 / 1.0)" in alice and "Comment: Clear plot." in alice
    assert "Content-Security-Policy" in alice and "<script" not in alice
    bob = (out / "feedback" / "bobjones_LATE_10202_20002_00_toy.md").read_text()
    assert bob.splitlines()[2] == "**Total: 5.5 / 6.0 points** (automatically graded 5.0 / 5.0; graded " \
        "by hand 0.5 / 1.0)."
    wrong = (out / "feedback" / "weekwrong_55555_20005_03_attention.html").read_text()
    assert "was not run" in wrong and "failed" not in wrong and "Total" not in wrong


@browser.needed
def test_week_feedback_pdfs_replace_the_pages_in_the_canvas_zip(week):
    out = week["out"]
    res = run("-m", "course", "pdfs", str(out), "--feedback")
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"wrote 4 feedback PDFs to {out / 'feedback'}" in res.stdout
    with zipfile.ZipFile(out / "canvas_feedback.zip") as z:
        names = {n: z.read(n) for n in z.namelist()}
    assert sorted(names) == ["alicesmith_10101_20001_feedback.pdf", "bobjones_LATE_10202_20002_feedback.pdf",
                             "kimdave_10404_20004_feedback.pdf"]          # weekwrong: held
    assert all(data.startswith(b"%PDF") for data in names.values())
    assert names["alicesmith_10101_20001_feedback.pdf"] == \
        (out / "feedback" / "alicesmith_10101_20001_00_toy.pdf").read_bytes()


def test_week_regrading_keeps_every_hand_grade(week):
    out = week["out"]
    from instructor.manual import load_ledger
    ledger = load_ledger(out)
    assert len([e for e in ledger.values() if e["question"] == "q4"]) == 4
    # the instructor fixes a hidden test (q3 now expects 4: every row loses its point) and DAVE's
    # notebook is replaced by another upload; then grades again into the same folder
    q3 = week["asg"] / "tests" / "q3.py"
    q3.write_text(q3.read_text().replace("== 3", "== 4"))
    (week["subs"] / DAVE).write_bytes(with_answer("A new upload.", "x = 2"))
    # BOB re-uploads too, his answer as it was (other bytes): his hand grade follows the answer
    (week["subs"] / BOB).write_bytes(with_answer("It goes down.", "plt.show()") + b"\n")
    res = week["grade"]("--gradebook", str(week["book"]), "--gradebook-column", "4700")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "kept 3 hand grades of 3 students and 1 comments" in res.stdout
    assert ("kept 1 hand grades of 1 answers whose content is unchanged; 1 answers changed and wait "
            "for a hand grade") in res.stdout
    assert f"1 not applied (still in the ledger): the answer changed since it was graded: {DAVE} q4" \
        in res.stdout
    assert f"  canvas id 10404: {DAVE} (hand grading not done: q4)" in res.stdout
    rows = grade_rows(out)
    assert {f: (r["q3"], r["q4"], r["final_points_earned"]) for f, r in rows.items()} == {
        ALICE: ("0.0", "1.0", "5.0"), BOB: ("0.0", "0.5", "4.5"), DAVE: ("0.0", "", ""),
        WRONG: ("0.0", "0.0", "0.0")}
    feedback = (out / "feedback" / "alicesmith_10101_20001_00_toy.md").read_text()
    assert "- q4: 1.0 / 1.0" in feedback and "Comment: Clear plot." in feedback
    assert "**Total: 5.0 / 6.0 points** (automatically graded 4.0 / 5.0; graded by hand 1.0 / 1.0)." \
        in feedback
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())
    assert got["grades"] == {("10101", "4700"): "5", ("10202", "4700"): "4.5"}     # DAVE: held
    assert load_ledger(out) == ledger                                         # nothing dropped
    assert (out / "manual-1.csv").exists() is False                  # the TA filled a copy
    filled = fill_by_column(out / "manual.csv", week["root"] / "dave.csv", {ALICE: "1", BOB: "0.5", DAVE: "1",
                                                                             WRONG: "0"})
    res = run("-m", "course", "manual", str(out), str(filled))
    assert res.returncode == 0, res.stdout + res.stderr
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())
    assert got["grades"] == {("10101", "4700"): "5", ("10202", "4700"): "4.5", ("10404", "4700"): "5"}


# ---------------------------------------------------------------- a Moodle class, PDFs, pages

M_ANA, M_BEN = ("Ana Garcia_201_assignsubmission_file_/00_toy.ipynb",
                "Ben Okafor_202_assignsubmission_file_/00_toy.ipynb")
M_CHEN1, M_CHEN2 = ("Chen Wu_203_assignsubmission_file_/00_toy.ipynb",
                    "Chen Wu_203_assignsubmission_file_/00_toy (1).ipynb")
M_DANA, M_ELI = ("Dana Ito_204_assignsubmission_file_/00_toy.ipynb",
                 "Eli Roth_205_assignsubmission_file_/03_attention.ipynb")


@pytest.fixture(scope="module")
def moodle_week(tmp_path_factory) -> dict:
    """A Moodle class: an answer cell that raises (NameError: PlotAtention), a good one, the same
    notebook uploaded twice, a broken upload (not JSON) and another week's notebook; graded with the
    grading worksheet, hand-graded with a filled copy of manual.csv merged without naming the worksheet."""
    root = tmp_path_factory.mktemp("moodleweek")
    os.chmod(root, 0o755)
    subs = root / "class"
    same = with_answer("It falls, then **flattens**.", "plt.show()")
    for name, data in [(M_ANA, with_answer("Attention <b>weights</b>.", "PlotAtention(ax)")),
                       (M_BEN, with_answer("The loss falls fast.", "plt.show()")),
                       (M_CHEN1, same), (M_CHEN2, same), (M_DANA, b"{not a notebook"),
                       (M_ELI, (REPO / "notebooks" / "03_attention.ipynb").read_bytes())]:
        (subs / name).parent.mkdir(parents=True, exist_ok=True)
        (subs / name).write_bytes(data)
    book = root / "worksheet.csv"
    book.write_bytes(lms_samples.moodle_worksheet([("201", "Ana García"), ("202", "Ben Okafor"),
                                                   ("203", "Chen Wu"), ("204", "Dana Ito"),
                                                   ("205", "Eli Roth")]))
    out = root / "out"
    graded = run("-m", "course", "grade", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out),
                 "--workers", "2", "--no-progress", "--no-similarity",
                         "--export-partial", "--gradebook", str(book))
    filled = fill_by_column(out / "manual.csv", root / "filled.csv",
                            {M_ANA: "0.5", M_BEN: "1", M_CHEN1: "1", M_CHEN2: "1"})
    with open(filled, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    rows[[r[0] for r in rows].index(M_ANA)][rows[0].index("comment")] = "Check the name <PlotAttention>."
    with open(filled, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    merged = run("-m", "course", "manual", str(out), str(filled))
    return {"root": root, "out": out, "graded": graded, "merged": merged}


def test_moodle_week_grades_and_fills_grade_and_feedback_comments(moodle_week):
    for res in (moodle_week["graded"], moodle_week["merged"]):
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "  moodle id 205: " in moodle_week["graded"].stdout           # another week's: held
    rows = grade_rows(moodle_week["out"])
    assert rows[M_DANA]["grading_status"].startswith("unreadable notebook")
    # a corrupt upload is as uncertain as another week's notebook: held, never exported as 0
    assert f"  moodle id 204: {M_DANA} (an unreadable upload, not run)" in moodle_week["graded"].stdout
    assert "HELD: an unreadable upload (1)" in (moodle_week["out"] / "report.html").read_text()
    sheet = list(csv.DictReader(io.StringIO((moodle_week["out"] / "moodle_import.csv").read_text(
        encoding="utf-8"), newline="")))
    got = {r["Identifier"]: (r["Grade"], r["Feedback comments"]) for r in sheet}
    assert {k: v[0] for k, v in got.items()} == {"Participant 201": "5.5", "Participant 202": "6",
                                                 "Participant 203": "6", "Participant 204": "",
                                                 "Participant 205": ""}
    ana = got["Participant 201"][1]
    assert ana.startswith("<h1>00_toy: feedback for Ana Garcia_201_assignsubmission_file_/00_toy.ipynb</h1>")
    assert "<strong>Total: 5.5 / 6.0 points</strong>" in ana
    assert "Comment: Check the name &lt;PlotAttention&gt;." in ana and "<PlotAttention>" not in ana
    assert "graded by hand: written by" not in ana                      # the course's marker stays out
    assert got["Participant 205"][1] == ""                               # held: nothing exported
    assert "not run" in (moodle_week["out"] / "feedback" /
                         f"{inputs_stem(M_ELI)}.html").read_text()


def inputs_stem(file: str) -> str:
    from autograder import inputs
    return inputs.safe_stem(file)


def test_moodle_week_page_shows_the_code_its_output_and_its_error(moodle_week):
    page = (moodle_week["out"] / "manual" / "q4.html").read_text(encoding="utf-8")
    assert "<details" not in page                                        # the code is shown, not folded
    assert "<p><strong>q4.</strong> Fill in the code.</p>" in page       # the prompt, rendered
    ana = _sections(page)[M_ANA]
    assert "<pre class='code'>" in ana and "PlotAtention(ax)" in ana
    assert "<pre class='error'>NameError: name &#x27;PlotAtention&#x27; is not defined</pre>" in ana
    assert "Attention &lt;b&gt;weights&lt;/b&gt;." in ana                # the student's text, escaped
    assert "<b>Ana García</b> · id 201 · row " in ana                     # the worksheet's name
    report = (moodle_week["out"] / "report.html").read_text(encoding="utf-8")
    assert "<b>Ana García</b><br><small class='file'>" in report


@browser.needed
def test_moodle_week_pdfs_show_the_work_and_name_no_file_the_grader_lacks(moodle_week, tmp_path):
    out = moodle_week["out"]
    res = run("-m", "course", "pdfs", str(out), "--assignment", str(hostile.FIXTURE))
    assert res.returncode == 0, res.stderr[-2000:]
    with open(out / "gradescope_pdfs" / "pages.csv", newline="", encoding="utf-8") as f:
        pages = {r["file"]: r for r in csv.DictReader(f)}
    assert int(pages[M_ANA]["pages"]) == 2
    from autograder.assignment import load
    from instructor import gradescope_pdf
    asg = load(str(hostile.FIXTURE))
    qs = [q for q in asg.questions if q.manual]
    prompts = gradescope_pdf.handgrading.prompts(gradescope_pdf.handgrading.blank_notebook(asg), asg)
    ana = next(r for r in gradescope_pdf.load_results(out) if r.file == M_ANA)
    text = gradescope_pdf.student_html(out, asg.name, qs, prompts, ana)
    assert "manual.csv" not in text and "<details" not in text
    assert "NameError: name &#x27;PlotAtention&#x27; is not defined" in text and "PlotAtention(ax)" in text
    assert "<strong>q4.</strong>" in text


@browser.needed
def test_moodle_week_report_pages_and_pdf_fit_a_laptop_screen(moodle_week, tmp_path):
    out = moodle_week["out"]
    shots = out / "screenshots"
    shots.mkdir(exist_ok=True)
    for page in (out / "report.html", out / "manual" / "q4.html",
                 out / "feedback" / f"{inputs_stem(M_ANA)}.html"):
        got = browser.widths(page, tmp_path)
        assert got["scroll"] <= got["client"] == browser.LAPTOP and got["scrolled"] == [], (page.name, got)
        browser.screenshot(page, shots / f"{page.stem}.png", tmp_path)     # for a person to look at


def similarity_section() -> str:
    """The report's similarity section for seven identical answers of 08_causal and six honest
    ones (the side-by-side code: long lines of code, two columns)."""
    from autograder import similarity as sim
    from autograder.assignment import load
    from benchmarks import similarity_class as sc
    choices = sc.honest_choices(4)
    books = {f"honest{i:02d}.ipynb": sc.notebook(sc.honest_cells(c)) for i, c in enumerate(choices[1:])}
    books.update({f"same{i}.ipynb": sc.notebook(sc.master_cells()) for i in range(3)})
    flags = sim.compare(sc.answer_rows(books), load(sc.NAME).given_code, sim.master_answers(sc.NAME))
    assert flags
    return sim.html_section(flags, sim.THRESHOLD, 0.1, len(books), True, shown=3)


@browser.needed
def test_moodle_week_pages_pass_axe_core_and_the_similarity_code_fits(moodle_week, tmp_path):
    """Every page the course writes has a language, a title heading, contrast and focus that
    axe-core passes (no serious or critical violation); the report with its similarity section's
    side-by-side code fits 1400 px, the code wrapping inside its boxes."""
    from playwright.sync_api import sync_playwright

    from autograder import similarity as sim
    out = moodle_week["out"]
    report = tmp_path / "report.html"
    shutil.copy(out / "report.html", report)
    assert sim.patch_report(report, similarity_section())
    long_line = "x" * 400                                 # one line longer than the page is wide
    text = report.read_text(encoding="utf-8")
    text = text.replace("<span class='hit'>", f"<span class='hit'>{long_line}", 1)
    report.write_text(text, encoding="utf-8")
    got = browser.widths(report, tmp_path)
    assert got["scroll"] <= got["client"] == browser.LAPTOP and got["scrolled"] == [], got
    pages = [report, out / "report.html", out / "manual" / "q4.html",
             out / "feedback" / f"{inputs_stem(M_ANA)}.html"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=browser.check(), args=["--no-sandbox", "--disable-gpu"])
        for page_file in pages:
            page = b.new_page(viewport={"width": browser.LAPTOP, "height": 900})
            page.goto(page_file.as_uri())
            assert page.evaluate("() => document.documentElement.lang") == "en", page_file.name
            assert browser.axe_violations(page) == [], page_file.name
            page.close()
        b.close()
