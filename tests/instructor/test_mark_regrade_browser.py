"""``course mark``'s page in Chromium while the class is re-graded under it (red team 2 F01): a late
submission moves the rows' positions; the page's poll sees that the rows changed and says "press r",
a key pressed on the answer read before is refused (nothing saved on anyone), and r loads the answers
again. The class is written as ``course grade`` leaves it, without running a notebook."""
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
