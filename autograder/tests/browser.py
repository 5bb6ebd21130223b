"""Headless Chromium, for the tests that look at pages in a browser (the report, the hand-grading
pages, the PDFs of ``course pdfs``), found as ``course pdfs`` finds it.

Where it is missing those tests skip, except under CI (the environment variable ``CI`` set, as
``.ci/run`` sets it after installing Debian's ``chromium`` when it is missing): there a missing
browser fails them, so that CI never passes with the browser tests skipped.
"""
import os

import pytest

from instructor.gradescope_pdf import find_chromium

CHROMIUM = find_chromium()
CI = bool(os.environ.get("CI"))
MISSING = "headless Chromium is not installed (apt-get install chromium)"
needed = pytest.mark.skipif(CHROMIUM is None and not CI, reason=f"{MISSING}; with CI set, this fails")


def check() -> str:
    """The browser's path; fails the test when there is none (reached only under CI)."""
    if CHROMIUM is None:
        pytest.fail(f"{MISSING}, and CI needs it: .ci/run installs it when it can")
    return CHROMIUM
