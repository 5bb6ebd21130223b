"""Headless Chromium, for the tests that look at pages in a browser (the report, the hand-grading
pages, the PDFs of ``course pdfs``), found as ``course pdfs`` finds it.

Where it is missing those tests skip, except under CI (the environment variable ``CI`` set, as
``.ci/run`` sets it after installing Debian's ``chromium`` when it is missing): there a missing
browser fails them, so that CI never passes with the browser tests skipped.
"""
import os
from pathlib import Path

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


LAPTOP = 1400                      # px: the width of a laptop's screen (1366-1440)
PROBE_WIDTH = """<script>
window.addEventListener('load', function () {
  var doc = document.documentElement, wide = [], scrolled = [];
  document.querySelectorAll('body *').forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.right > doc.clientWidth + 1 && wide.length < 5) wide.push(e.tagName + '.' + e.className);
    if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible'
        && scrolled.length < 5) scrolled.push(e.tagName + '.' + e.className);
  });
  var out = document.createElement('pre'); out.id = 'width-probe';
  out.textContent = JSON.stringify({scroll: doc.scrollWidth, client: doc.clientWidth, wide: wide,
                                    scrolled: scrolled});
  document.body.appendChild(out);
});
</script>"""


def widths(page: Path, tmp: Path, width: int = LAPTOP) -> dict:
    """How wide ``page`` lays out in a window ``width`` px wide: {"scroll": the document's width,
    "client": the window's, "wide": up to 5 elements that reach past its right edge, "scrolled": up
    to 5 that scroll sideways inside themselves (a table in a scrolling box)}. The page's
    Content-Security-Policy is taken out of a copy, so that the probe runs."""
    import html
    import json
    import re
    import subprocess
    text = re.sub(r"<meta http-equiv='Content-Security-Policy'[^>]*>", "", page.read_text(encoding="utf-8"))
    copy = tmp / f"width-{page.name}"
    copy.write_text(text.replace("</body>", PROBE_WIDTH + "</body>"), encoding="utf-8")
    res = subprocess.run([check(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update",
                          "--disable-sync", "--hide-scrollbars", "--disable-dev-shm-usage",
                          "--force-device-scale-factor=1", f"--user-data-dir={tmp / 'width-profile'}",
                          f"--window-size={width},900", "--virtual-time-budget=5000", "--dump-dom",
                          copy.as_uri()], capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="width-probe">(.*?)</pre>', res.stdout, re.S)
    assert m, res.stderr[-2000:]
    return json.loads(html.unescape(m.group(1)))


def screenshot(page: Path, shot: Path, tmp: Path, width: int = LAPTOP, height: int = 900) -> Path:
    """``page`` as a laptop shows it, as a PNG (for a person to look at)."""
    import subprocess
    subprocess.run([check(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--force-device-scale-factor=1",
                    f"--user-data-dir={tmp / 'shot-profile'}", f"--window-size={width},{height}",
                    f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120)
    return shot


# axe-core (Deque's accessibility rules), from the npm registry: tests/support/package.json pins it,
# and `make setup` (or `npm install --prefix tests/support`) puts it here.
AXE = Path(__file__).resolve().with_name("node_modules") / "axe-core" / "axe.min.js"
AXE_MISSING = "axe-core is not installed (npm install --prefix tests/support)"
# beside every serious or critical violation, the page's structure: a title heading and a language
AXE_ALSO = ("page-has-heading-one", "html-has-lang")


def axe_violations(page, also: tuple[str, ...] = AXE_ALSO) -> list[dict]:
    """axe-core's violations on a Playwright ``page`` as it is now, of impact serious or critical
    (and the rules ``also``): [{"id", "impact", "nodes", "where": up to 5 selectors}]. The script
    is evaluated through the DevTools protocol, which the page's Content-Security-Policy does not
    stop. Skips where axe-core is missing, fails under CI."""
    if not AXE.is_file():
        if CI:
            pytest.fail(f"{AXE_MISSING}, and CI needs it: `make setup` installs it")
        pytest.skip(AXE_MISSING)
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8") + "\n;0")
    found = page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length,
                                       where: v.nodes.slice(0, 5).map(n => n.target.join(' '))}));
    }""")
    return [v for v in found if v["impact"] in ("serious", "critical") or v["id"] in also]

