"""Grade one notebook the way Gradescope runs Otter's autograder zip (for tests and checks).

Gradescope unpacks the zip into /autograder/source, puts the submission in /autograder/submission
and runs ``/autograder/source/run_autograder``: in the course's zip, the course's check before
Otter (``submission_check.py before``: which week's notebook this is), Otter's ``run_autograder``
main, and the check after it. :func:`grade` makes that layout in a scratch folder and runs the
zip's own ``run_autograder`` there, with two changes only: /autograder is the scratch folder, and
``python`` is this interpreter (no mamba environment to activate). So the course's tests run
in-process as Otter runs them there (the student's code and the tests in one process: see
docs/platforms.md, "Gradescope").
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

CONTAINER_ONLY = ("eval ", "mamba ", "export PATH=")     # lines of run_autograder for Gradescope's image


def local_script(text: str, root: Path) -> str:
    """The zip's ``run_autograder`` made to run here: /autograder -> ``root``, this Python, and no
    lines that set up Gradescope's mamba environment."""
    lines = [ln for ln in text.splitlines() if not ln.startswith(CONTAINER_ONLY)]
    text = "\n".join(lines).replace("/autograder", str(root)) + "\n"
    return re.sub(r"(?m)^(\s*)python ", lambda m: m.group(1) + shlex.quote(sys.executable) + " ", text)


def grade(autograder_zip: Path, notebook: Path, scratch: Path, timeout: float = 600,
          name: str | None = None) -> dict:
    """Gradescope's results.json for ``notebook`` (submitted as ``name``, default its file name)
    graded with ``autograder_zip``, run through the zip's ``run_autograder``."""
    root = scratch / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as z:
        z.extractall(root / "source")
    (root / "submission" / (name or notebook.name)).write_bytes(notebook.read_bytes())
    source = root / "source"
    runner = source / "run_otter.py"
    runner.write_text(runner.read_text().replace('"/autograder"', repr(str(root))))
    script = local_script((source / "run_autograder").read_text(), root)
    done = subprocess.run(["bash", "-c", script], cwd=scratch, capture_output=True,
                          text=True, timeout=timeout)
    results = root / "results" / "results.json"
    if not results.exists():
        raise RuntimeError(f"run_autograder wrote no results.json (exit {done.returncode}):\n"
                           f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(results.read_text())


def question_points(results: dict) -> dict[str, float]:
    """{question: points earned} from Otter's results.json (its tests are named by question)."""
    return {t["name"]: float(t["score"]) for t in results["tests"] if t["name"] != "Public Tests"}
