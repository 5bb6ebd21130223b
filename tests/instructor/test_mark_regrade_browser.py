"""``course mark``'s page in Chromium while the class is re-graded under it: a late
submission moves the rows' positions; the page's poll sees that the rows changed and says "press r",
a key pressed on the answer read before is refused (nothing saved on anyone), and r loads the answers
again. A re-grade that changes one row only leaves a page loaded before it unable to save on any
row, until r. A progress bar a student saved shows where it ended. The class is written as ``course
grade`` leaves it, without running a notebook."""
from __future__ import annotations

import threading

import browser
import pytest
from test_mark_units import FILES, graded, regrade, row

from autograder.csvcells import file_key
from instructor.ledger import Ledger

pytestmark = [pytest.mark.e2e, browser.needed]


def test_a_regrade_under_an_open_page_is_noticed_and_no_key_grades_another_row(tmp_path):
    from playwright.sync_api import sync_playwright
    from waitress.server import create_server

    from instructor.mark.app import create_app
    from instructor.mark.folder import Folder
    out = graded(tmp_path)
    srv = create_server(create_app(out, {"tok-ana": "ana"}), host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=srv.run, daemon=True).start()
    base = f"http://127.0.0.1:{srv.effective_port}"
    last = Folder(out).rows[-1].file
    late = next(f"late{k}_{10900 + k}_1_00_toy.ipynb" for k in range(1000)
                if file_key(f"late{k}_{10900 + k}_1_00_toy.ipynb") < file_key(last))
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=browser.check(), args=["--no-sandbox", "--disable-gpu"])
            page = b.new_page()
            page.goto(f"{base}/?token=tok-ana")
            page.goto(f"{base}/q/q4")
            page.wait_for_selector("#cards .answer.current")
            page.keyboard.press("a")                                  # one rubric item
            page.keyboard.type("1")
            page.keyboard.press("Tab")
            page.keyboard.type("Correct")
            page.keyboard.press("Enter")
            page.wait_for_selector("#items li")
            for _ in FILES[1:]:
                page.keyboard.press("j")                              # to the last answer
            page.wait_for_function("() => (document.querySelector('#cards .answer.current h2') || {})"
                                   ".textContent === '#6'")
            regrade(out, [row(k, f) for k, f in enumerate(FILES)] + [row(99, late)])
            page.wait_for_selector("#banner:has-text('re-graded')", timeout=15_000)   # the 4 s poll
            page.keyboard.press("1")                                  # on the card read before
            page.wait_for_timeout(500)
            assert "press r" in page.inner_text("#banner")
            assert not Ledger(out).answers()                          # nothing saved on anyone
            page.keyboard.press("r")
            page.wait_for_function("() => !document.querySelector('#banner').textContent")
            assert page.inner_text("#progress") == f"0 / {len(FILES) + 1} graded"
            b.close()
    finally:
        srv.close()


def serve(out):
    from waitress.server import create_server

    from instructor.mark.app import create_app
    srv = create_server(create_app(out, {"tok-ana": "ana"}), host="127.0.0.1", port=0, threads=2)
    threading.Thread(target=srv.run, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.effective_port}"


def test_after_a_regrade_that_changed_one_row_the_open_page_saves_on_no_row_until_r(tmp_path):
    from playwright.sync_api import sync_playwright

    from instructor.mark.folder import Folder
    out = graded(tmp_path)
    srv, base = serve(out)
    changed = FILES.index(Folder(out).rows[-1].file)                 # the last answer is re-uploaded
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=browser.check(), args=["--no-sandbox", "--disable-gpu"])
            page = b.new_page()
            page.goto(f"{base}/?token=tok-ana")
            page.goto(f"{base}/q/q4")
            page.wait_for_selector("#cards .answer.current")
            page.fill("#new-points", "1")
            page.fill("#new-text", "Correct")
            page.press("#new-text", "Enter")
            page.wait_for_selector("#items li")
            page.keyboard.press("Escape")
            regrade(out, [row(k, f, sha="e" * 64 if k == changed else None) for k, f in enumerate(FILES)])
            page.keyboard.press("1")                                  # answer #1: the re-grade kept it
            page.wait_for_selector("#banner:has-text('nothing is saved until you press r')", timeout=15_000)
            page.keyboard.press("1")
            page.fill("#comment", "typed after the re-grade")
            page.keyboard.press("Tab")
            page.wait_for_timeout(500)
            assert not Ledger(out).answers()                          # nothing saved, on any row
            assert "press r" in page.inner_text("#banner")
            page.keyboard.press("Escape")
            page.keyboard.press("r")
            page.wait_for_function("() => !document.querySelector('#banner').textContent")
            page.keyboard.press("1")
            page.wait_for_function("() => document.querySelector('#progress').textContent.startsWith('1 /')")
            b.close()
    finally:
        srv.close()


def test_a_saved_progress_bar_shows_where_it_ended(tmp_path):
    """tqdm in Jupyter: a widget whose text/plain is the bar as it started ("0%| | 0/1500"), its
    last state in the notebook's saved widget state."""
    from playwright.sync_api import sync_playwright

    from autograder import notebook_info
    widgets = {"box": {"_model_name": "HBoxModel", "children": ["IPY_MODEL_l", "IPY_MODEL_b", "IPY_MODEL_r"]},
               "l": {"_model_name": "HTMLModel", "value": "100%"},
               "b": {"_model_name": "FloatProgressModel", "value": 1500, "max": 1500},
               "r": {"_model_name": "HTMLModel", "value": " 1500/1500 [00:09&lt;00:00, 160.1it/s]"}}
    nb = {"metadata": {"widgets": {notebook_info.WIDGET_STATE: {"state": {
        k: {"model_name": v["_model_name"], "state": v} for k, v in widgets.items()}}}},
        "cells": [{"cell_type": "markdown", "source": "**q4** <!-- BEGIN QUESTION -->"},
                  {"cell_type": "code", "source": "train()", "metadata": {"tags": ["otter_ignore"]},
                   "outputs": [{"output_type": "display_data", "metadata": {}, "data": {
                       "text/plain": "  0%|          | 0/1500 [00:00<?, ?it/s]",
                       notebook_info.WIDGET_VIEW: {"model_id": "box"}}}]},
                  {"cell_type": "markdown", "source": "<!-- END QUESTION -->"}]}
    found = notebook_info.answers(nb, ["q4"])
    assert found["q4"]["found"], found
    rows = [row(k, f) for k, f in enumerate(FILES)]
    for r in rows:
        r.answers = found
    out = graded(tmp_path)
    regrade(out, rows)
    srv, base = serve(out)
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=browser.check(), args=["--no-sandbox", "--disable-gpu"])
            page = b.new_page()
            page.goto(f"{base}/?token=tok-ana")
            page.goto(f"{base}/q/q4")
            page.wait_for_selector("#cards .answer.current .saved")
            saved = page.inner_text("#cards .answer.current .saved")
            assert "100%|██████████| 1500/1500 [00:09<00:00, 160.1it/s]" in saved
            assert "| 0/1500" not in saved and "not shown" not in saved
            b.close()
    finally:
        srv.close()
