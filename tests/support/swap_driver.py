"""One publish of an output folder, for ``test_swap_kill_points.py`` to kill under strace.

    python swap_driver.py grade OUT            OUT/.staging-prepared made OUT's grading, as the end
                                               of ``course grade`` makes it (autograder.api._publish)
    python swap_driver.py manual OUT FILLED    ``course manual OUT FILLED`` (outdir.editing's path)

Everything is imported and made ready first; then the marker, a failing ``access`` of MARKER, tells
the test where start-up ends: the kill points counted are the calls after it.
"""
from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

from autograder import api, handgrading, outdir, report  # noqa: F401  (imported before the marker)
from instructor import manual

MARKER = "/swap-driver-start"
PREPARED = outdir.STAGING_PREFIX + "prepared"


def main(argv: list[str]) -> int:
    verb, out = argv[0], Path(argv[1])
    ctypes.CDLL(None)                 # outdir's atomic exchange loads it: not a kill point of its own
    staging = out / f"{outdir.STAGING_PREFIX}{os.getpid()}"
    if verb == "grade":               # the staging folder a run of this process would have written
        os.rename(out / PREPARED, staging)
    os.access(MARKER, os.F_OK)
    if verb == "grade":
        api._publish(staging, out, None, None)  # type: ignore[arg-type]  # no finish: outcome unread
        return 0
    return manual.main([str(out), argv[2], "--force"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
