"""The LMS and hand-grading workflow through the real commands, on one class of the toy assignment
named as Canvas's bulk download names it:

    python -m autograder SUBMISSIONS --assignment 00_toy --out OUT --gradebook gradebook.csv
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
from pathlib import Path

import hostile
import lms_samples
import pytest

from autograder import notebook_info

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
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
    res = run("-m", "autograder", str(subs), "--assignment", str(hostile.FIXTURE), "--out", str(out),
              "--workers", "2", "--no-progress", "--gradebook", str(book))
    rows = {}
    if (out / "grades.csv").exists():
        rows = {r["file"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    return {"root": root, "out": out, "result": res, "rows": rows, "book": book}


def test_grading_finishes_and_writes_the_canvas_import(batch):
    res = batch["result"]
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "canvas_import.csv: 5 students' column '00 Toy (4700)' filled in" in res.stdout
    assert "5 rows have no hand-graded points yet (course manual)" in res.stdout
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
    assert rows[0] == ["file", "id", "q4", "comment"] and len(rows) == 6
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
                             ("10404", "4700"): "5", ("55555", "4700"): "0"}
    feedback = (out / "feedback" / "alicesmith_10101_20001_00_toy.md").read_text()
    assert "- q4: 1.0 / 1.0" in feedback and "Comment: Nice." in feedback


# ---------------------------------------------------------------- in a browser

def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--no-first-run", "--disable-dev-shm-usage", "--force-device-scale-factor=1",
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


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)")
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


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)")
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
