"""``course mark`` in a real headless Chromium (Debian's, driven by Playwright), on one class of 30
toy notebooks graded by the real ``course grade`` with a Canvas gradebook: a TA grades the whole
class by keyboard; a second TA works on the same question at once and the later save of one answer
is refused, not written over; a rubric item's edit reaches every answer; Export writes the same
Canvas import and grades.csv as the CSV route for the same points; a re-grade keeps everything;
the page fits a laptop screen (screenshots in the class's folder, for a person to look at).

The tests run in order and share the class (one grading, one server)."""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import browser
import hostile
import lms_samples
import pytest
from test_grade_lms import with_answer

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.e2e, browser.needed]
N = 30
FILES = [f"student{k:02d}_{10100 + k}_{20000 + k}_00_toy.ipynb" for k in range(N)]
STUDENTS = [(f"Student, {k:02d}", str(10100 + k), "", "", "A") for k in range(N)]
# the rubric the TA makes while grading, and which items each answer gets (by key)
RUBRIC = [("1", "Correct plot, labelled"), ("-0.5", "Axes not labelled"), ("0", "No plot")]
PLAN = {0: ["1"], 1: ["1", "2"], 2: ["3"]}                       # answer k gets PLAN[k % 3]
POINTS = {0: "1", 1: "0.5", 2: "0"}


def grade(subs: Path, out: Path, book: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "course", "grade", str(subs), "--assignment", str(hostile.FIXTURE),
           "--out", str(out), "--workers", "2", "--no-progress", "--no-similarity", "--cache",
           "--export-partial", "--gradebook", str(book)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=REPO,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("mark")
    os.chmod(root, 0o755)
    subs = root / "class"
    subs.mkdir()
    for k, f in enumerate(FILES):
        (subs / f).write_bytes(with_answer(f"The loss falls fast, then flattens ({k}).", "plt.show()"))
    book = root / "gradebook.csv"
    book.write_bytes(lms_samples.canvas_gradebook(STUDENTS))
    out = root / "out"
    done = grade(subs, out, book)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    csv_route = root / "csv-route"
    shutil.copytree(out, csv_route)                                   # graded, not yet by hand
    return {"root": root, "subs": subs, "book": book, "out": out, "csv_route": csv_route,
            "shots": out / "screenshots"}


@pytest.fixture(scope="module")
def server(klass):
    from waitress.server import create_server

    from instructor.mark.app import create_app
    tokens = {"ana-token-0123456789": "ana", "ben-token-0123456789": "ben"}
    app = create_app(klass["out"], tokens)
    srv = create_server(app, host="127.0.0.1", port=0, threads=4)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{srv.effective_port}"
    yield {"base": base, "ana": f"{base}/?token=ana-token-0123456789",
           "ben": f"{base}/?token=ben-token-0123456789", "app": app}
    srv.close()


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=browser.check(),
                              args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield b
        b.close()


def page_of(chromium, link: str, width: int = 1400, height: int = 900):
    ctx = chromium.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # a refused save is a 409, which the browser logs as a failed resource: that one is expected
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "(CONFLICT)" not in m.text
            else None)
    page.goto(link)
    page.errors = errors
    return page


def open_q4(page, base: str) -> None:
    page.goto(f"{base}/q/q4")
    page.wait_for_selector("#cards .answer.current")


def ledger_grades(out: Path) -> dict[str, float]:
    from instructor.manual import load_ledger
    return {e["file"]: e["points"] for e in load_ledger(out).values() if e["question"] == "q4"}


def label_of(page) -> str:
    return page.inner_text("#cards .answer.current h2")


def wait_label(page, label: str) -> None:
    page.wait_for_function("t => (document.querySelector('#cards .answer.current h2') || {})"
                           ".textContent === t", arg=label)


def test_grading_a_class_of_30_by_keyboard(klass, server, chromium):
    page = page_of(chromium, server["ana"])
    open_q4(page, server["base"])
    assert page.inner_text("#progress") == f"0 / {N} graded"
    for points, text in RUBRIC:                                      # the rubric, made while grading
        page.keyboard.press("a")
        page.keyboard.type(points)
        page.keyboard.press("Tab")
        page.keyboard.type(text)
        page.keyboard.press("Enter")
        page.wait_for_function("n => document.querySelectorAll('#items li').length === n", arg=int(
            RUBRIC.index((points, text)) + 1))
    from instructor.mark.folder import Folder
    order = [row.file for row in Folder(klass["out"]).rows]          # the page's anonymous order
    for n in range(N):
        wait_label(page, f"#{n + 1}")
        for key in PLAN[FILES.index(order[n]) % 3]:
            page.keyboard.press(key)
            page.wait_for_function("k => document.querySelector(`#items li:nth-child(${k})`)"
                                   ".classList.contains('on')", arg=int(key))
        page.wait_for_function("n => document.querySelector('#progress').textContent.startsWith(n + ' /')",
                               arg=n + 1)
        page.keyboard.press("u")                                     # the next ungraded answer
    assert page.inner_text("#progress") == f"{N} / {N} graded"
    assert "Every answer shown is graded." in page.inner_text("#banner")
    assert ledger_grades(klass["out"]) == {f: float(POINTS[k % 3]) for k, f in enumerate(FILES)}
    assert not any(f in page.content() for f in FILES)               # anonymous: no file, no name
    assert page.errors == []


def test_filters_by_grading_rubric_item_and_automatic_score(server, chromium):
    page = page_of(chromium, server["ana"])
    open_q4(page, server["base"])

    def shown() -> str:
        return page.inner_text("#where")

    page.select_option("#item-filter", label="3: No plot")
    page.wait_for_function("() => document.querySelector('#where').textContent.includes('of 10 shown')")
    page.keyboard.press("j")
    page.wait_for_function("() => document.querySelector('#where').textContent.includes('answer 2 of 10')")
    assert page.inner_text("#items li.on .text") == "No plot"
    page.select_option("#item-filter", value="")
    page.select_option("#filter", value="ungraded")
    page.wait_for_function("() => document.querySelector('#where').textContent.startsWith('no answer')")
    page.select_option("#filter", value="all")
    page.fill("#auto-min", "5.5")                                    # every row has 5 automatic points
    page.press("#auto-min", "Tab")
    page.wait_for_function("() => document.querySelector('#where').textContent.startsWith('no answer')")
    page.fill("#auto-min", "5")
    page.press("#auto-min", "Tab")
    page.wait_for_function(f"() => document.querySelector('#where').textContent.includes('of {N} shown')")
    assert "of 30 shown" in shown() and page.errors == []


def test_two_tas_at_once_the_later_save_is_refused_not_written_over(klass, server, chromium):
    ana = page_of(chromium, server["ana"])
    ben = page_of(chromium, server["ben"])
    for p in (ana, ben):
        open_q4(p, server["base"])
    assert label_of(ana) == label_of(ben) == "#1"
    ana.fill("#comment", "Good plot; say why it flattens.")
    ana.keyboard.press("Tab")                                        # leaves the field: saved
    ana.wait_for_function("() => !document.querySelector('#banner').textContent")
    ana.wait_for_selector("#grade small:has-text('by ana')")
    ben.keyboard.press("2")                                          # from the version ben saw
    ben.wait_for_selector("#banner:has-text('Not saved')")
    assert "changed by ana" in ben.inner_text("#banner")
    assert ben.input_value("#comment") == "Good plot; say why it flattens."   # ana's, shown to ben
    from instructor.ledger import Ledger
    from instructor.mark.folder import Folder
    led = Ledger(klass["out"])
    key = Folder(klass["out"]).keys(led, "q4")[0]
    first = led.answer(key)
    assert first.comment == "Good plot; say why it flattens." and first.who == "ana"
    ben.keyboard.press("2")                                          # now from what is there
    ben.wait_for_function("() => document.querySelector('#items li:nth-child(2)').classList.contains('on')")
    after = led.answer(key)
    assert after.who == "ben" and after.comment == first.comment and len(after.items) == len(first.items) + 1
    whos = [h["who"] for h in led.history(list(key))]
    assert whos[-2:] == ["ana", "ben"]
    ben.keyboard.press("Shift+Digit2")                               # and back as it was
    ben.wait_for_function("() => !document.querySelector('#items li:nth-child(2)').classList.contains('on')")
    led.close()
    assert ana.errors == [] and ben.errors == []


def test_two_tas_comment_on_one_answer_and_the_later_comment_waits_beside_to_merge(klass, server, chromium):
    ana = page_of(chromium, server["ana"])
    ben = page_of(chromium, server["ben"])
    for p in (ana, ben):
        open_q4(p, server["base"])
        p.keyboard.press("j")                                        # answer #2
        wait_label(p, "#2")
    ana.fill("#comment", "Explain the flat part.")
    ana.keyboard.press("Tab")
    ana.wait_for_selector("#grade small:has-text('by ana')")
    ben.fill("#comment", "Label the axes.")                          # typed from the version ben saw
    ben.keyboard.press("Tab")
    ben.wait_for_selector("#banner:has-text('Not saved')")
    assert "yours is beside it, to merge" in ben.inner_text("#banner")
    assert ben.is_visible("#merge")
    assert ben.input_value("#merge-yours") == "Label the axes."     # nothing ben typed is lost
    assert ben.input_value("#merge-theirs") == "Explain the flat part."
    assert ben.input_value("#comment") == "Explain the flat part."
    from instructor.ledger import Ledger
    from instructor.mark.folder import Folder
    led = Ledger(klass["out"])
    key = Folder(klass["out"]).keys(led, "q4")[1]
    assert [r["comment"] for r in led.refused(key)] == ["Label the axes."]   # kept by the server too
    ben.click("#merge-both")
    ben.wait_for_function("() => document.querySelector('#merge').hidden")
    ben.wait_for_selector("#grade small:has-text('by ben')")
    assert led.answer(key).comment == "Explain the flat part.\nLabel the axes."
    assert ben.input_value("#comment") == "Explain the flat part.\nLabel the axes."
    with led.transaction():                                          # as it was, for the export's test
        led.save(key, led.answer(key).version, "ben", comment="")
    led.close()
    assert ana.errors == [] and ben.errors == []


CLASS_OF = "document.querySelector(`#items li:nth-child(${k})`).className"


def test_a_number_key_applies_its_item_and_never_takes_it_off(klass, server, chromium):
    page = page_of(chromium, server["ana"])
    open_q4(page, server["base"])
    on = page.evaluate("() => Array.from(document.querySelectorAll('#items li'), li => li.className)")
    on = [c == "on" for c in on]
    k = on.index(True) + 1                                           # an item answer #1 has
    grade = page.inner_text("#grade span")
    page.keyboard.press(str(k))                                      # pressed again: kept, and said so
    page.wait_for_selector(f"#banner:has-text('Item {k} is already applied: Shift+{k} takes it off')")
    assert page.inner_text("#grade span") == grade and on[k - 1]
    assert page.evaluate(f"k => {CLASS_OF}", k) == "on"
    page.keyboard.press(f"Shift+Digit{k}")                           # its own key takes it off
    page.wait_for_function(f"k => {CLASS_OF} !== 'on'", arg=k)
    page.keyboard.press(str(k))                                      # and the number puts it back
    page.wait_for_function(f"k => {CLASS_OF} === 'on'", arg=k)
    page.wait_for_function("g => document.querySelector('#grade span').textContent === g", arg=grade)
    assert page.errors == []


def test_a_duplicate_item_is_refused_and_deleting_one_asks_first(klass, server, chromium):
    page = page_of(chromium, server["ana"])
    open_q4(page, server["base"])
    page.keyboard.press("a")
    page.keyboard.type("0.5")
    page.keyboard.press("Tab")
    page.keyboard.type("correct plot,  labelled")
    page.keyboard.press("Enter")
    page.wait_for_selector("#banner:has-text('rubric item 1 already says')")
    assert page.locator("#items li").count() == len(RUBRIC)
    page.fill("#new-points", "0")
    page.fill("#new-text", "Unused")
    page.press("#new-text", "Enter")
    page.wait_for_function("n => document.querySelectorAll('#items li').length === n", arg=len(RUBRIC) + 1)
    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    page.click("#items li:nth-child(4) button[aria-label='delete item 4']")
    page.wait_for_timeout(300)
    assert asked == ["Delete rubric item 4 (+0: Unused)?"]
    assert page.locator("#items li").count() == len(RUBRIC) + 1     # not confirmed: kept
    page.once("dialog", lambda d: d.accept())
    page.click("#items li:nth-child(4) button[aria-label='delete item 4']")
    page.wait_for_function("n => document.querySelectorAll('#items li').length === n", arg=len(RUBRIC))
    assert [e for e in page.errors if "(BAD REQUEST)" not in e] == []     # the duplicate's refusal


def wait_points(page, k: int, points: str) -> None:
    """Until the rubric's item ``k`` shows ``points`` (the server answered the edit)."""
    page.wait_for_function("([k, p]) => (document.querySelector(`#items li:nth-child(${k}) .pts`) || {})"
                           ".textContent === p", arg=[k, points])


def test_a_rubric_edit_reaches_every_answer(klass, server, chromium):
    before = ledger_grades(klass["out"])
    page = page_of(chromium, server["ana"])
    open_q4(page, server["base"])
    page.click("#items li:nth-child(2) button:has-text('edit')")      # "Axes not labelled": -0.5 -> -0.75
    page.fill("#items li:nth-child(2) input[aria-label=points]", "-0.75")
    page.press("#items li:nth-child(2) input[aria-label=points]", "Enter")
    page.wait_for_selector("#banner:has-text('every answer with this item follows')")
    wait_points(page, 2, "-0.75")
    after = ledger_grades(klass["out"])
    changed = {f for f in FILES if before[f] != after[f]}
    assert changed == {f for k, f in enumerate(FILES) if k % 3 == 1}
    assert all(after[f] == 0.25 for f in changed)
    page.click("#items li:nth-child(2) button:has-text('edit')")      # back, for the LMS comparison
    page.fill("#items li:nth-child(2) input[aria-label=points]", "-0.5")
    page.press("#items li:nth-child(2) input[aria-label=points]", "Enter")
    wait_points(page, 2, "-0.5")
    assert ledger_grades(klass["out"]) == before
    assert page.errors == []


def test_export_writes_the_same_lms_files_as_the_csv_route(klass, server, chromium):
    page = page_of(chromium, server["ana"])
    page.click("#export")
    page.wait_for_selector("#exported:has-text('canvas_import.csv')")
    text = page.inner_text("#exported")
    assert f"canvas_feedback.zip: {N} files for {N} students" in text and "rubric_stats.csv" in text
    route = klass["csv_route"]
    with open(route / "manual.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    col = rows[0].index("q4")
    for r in rows[1:]:
        r[col] = POINTS[FILES.index(r[0]) % 3]
    filled = klass["root"] / "filled.csv"
    with open(filled, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    done = subprocess.run([sys.executable, "-m", "course", "manual", str(route), str(filled)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    out = klass["out"]
    for name in ("grades.csv", "canvas_import.csv"):
        assert (out / name).read_bytes() == (route / name).read_bytes(), name
    got = lms_samples.canvas_import((out / "canvas_import.csv").read_bytes())
    assert got["grades"][("10101", "4700")] == "5.5"                  # student 01: 5 automatic + 0.5
    feedback = (out / "feedback" / "student01_10101_20001_00_toy.md").read_text()
    assert "- q4: 0.5 / 1.0\n  - +1: Correct plot, labelled\n  - -0.5: Axes not labelled" in feedback


def test_a_regrade_keeps_every_hand_grade_rubric_and_comment(klass, server, chromium):
    from instructor.ledger import Ledger
    led = Ledger(klass["out"])
    before = (led.entries(), [i.as_dict() for i in led.items("q4")])
    led.close()
    changed = FILES[4]
    (klass["subs"] / changed).write_bytes(with_answer("A new upload.", "plt.show()"))
    done = grade(klass["subs"], klass["out"], klass["book"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"kept {N - 1} hand grades of {N - 1} students" in done.stdout
    assert f"the answer changed since it was graded: {changed} q4" in done.stdout
    led = Ledger(klass["out"])
    assert (led.entries(), [i.as_dict() for i in led.items("q4")]) == before    # nothing lost
    led.close()
    with open(klass["out"] / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    assert rows[changed]["q4"] == "" and rows[FILES[0]]["q4"] == "1.0" and rows[FILES[1]]["q4"] == "0.5"
    page = page_of(chromium, server["ana"])
    open_q4(page, server["base"])
    assert page.inner_text("#progress") == f"{N - 1} / {N} graded"     # the new upload waits
    page.keyboard.press("u")
    page.wait_for_function("() => document.querySelector('#grade').textContent.startsWith('not graded')")
    page.keyboard.press("1")
    page.wait_for_function("n => document.querySelector('#progress').textContent.startsWith(n + ' /')", arg=N)
    assert page.errors == []


WIDTHS = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


def serious(page) -> list[dict]:
    return browser.axe_violations(page)


def test_every_page_passes_axe_core(klass, server, chromium):
    """No serious or critical violation (contrast, names, focus, language), and a title heading:
    the first page after Export, a question's page, one answer and all of them."""
    overview = page_of(chromium, server["ana"], 1366, 768)
    assert serious(overview) == []
    overview.click("#export")
    overview.wait_for_selector("#exported:has-text('canvas_import.csv')")
    assert serious(overview) == []
    page = page_of(chromium, server["ana"], 1366, 768)
    open_q4(page, server["base"])
    assert page.inner_text("h1").startswith("q4 (")
    assert serious(page) == []
    page.keyboard.press("v")
    page.wait_for_function(f"() => document.querySelectorAll('#cards .answer').length === {N}")
    assert serious(page) == []
    assert overview.errors == [] and page.errors == []


def test_with_a_filter_set_the_bar_hides_neither_the_answer_nor_its_grade(klass, server, chromium):
    page = page_of(chromium, server["ana"], 1366, 768)
    open_q4(page, server["base"])
    page.select_option("#item-filter", label="1: Correct plot, labelled")
    page.fill("#auto-min", "0")
    page.press("#auto-min", "Tab")
    page.wait_for_function("() => document.querySelector('#where').textContent.includes('of 20 shown')")
    page.keyboard.press("Escape")                                    # out of the filter's field
    for step in ("j", "j"):
        page.keyboard.press(step)
    page.wait_for_function("() => document.querySelector('#where').textContent.includes('answer 3 of 20')")
    page.wait_for_timeout(300)
    bar = page.locator(".bar").bounding_box()
    bottom = bar["y"] + bar["height"]
    for what in ("#where", "#grade", "#cards .answer.current h2"):
        box = page.locator(what).bounding_box()
        assert bottom <= box["y"] and box["y"] + box["height"] <= 768, (what, bar, box)
    assert page.evaluate(WIDTHS)[0] <= 1366
    assert page.errors == []


def test_the_page_fits_a_laptop_screen(klass, server, chromium):
    shots = klass["shots"]
    shots.mkdir(exist_ok=True)
    for width, height in ((1366, 768), (1440, 900)):
        page = page_of(chromium, server["ana"], width, height)
        open_q4(page, server["base"])
        size = page.evaluate(WIDTHS)
        assert size[0] <= size[1] == width, size
        box = page.locator("#panel").bounding_box()
        assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= height   # the rubric in view
        card = page.locator("#cards .answer.current img").first.bounding_box()
        assert card["x"] + card["width"] <= box["x"]                    # the figure beside it, not under
        page.screenshot(path=str(shots / f"grade-{width}.png"))
    page.keyboard.press("v")                                          # every answer on one page
    page.wait_for_function(f"() => document.querySelectorAll('#cards .answer').length === {N}")
    size = page.evaluate(WIDTHS)
    assert size[0] <= size[1]
    page.screenshot(path=str(shots / "all-on-one-page.png"))
    overview = page_of(chromium, server["ana"], 1366, 768)
    overview.screenshot(path=str(shots / "overview.png"))
    table = overview.inner_text("table.progress")
    assert "q4" in table and f"{N} / {N}" in table
    keep = Path(os.environ.get("COURSE_MARK_SHOTS", "/tmp/course-mark-screenshots"))
    keep.mkdir(parents=True, exist_ok=True)
    for shot in shots.glob("*.png"):
        shutil.copy(shot, keep / shot.name)                             # for a person to look at
