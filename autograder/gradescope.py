"""Grade one notebook the way Gradescope runs Otter's autograder zip (for tests and checks).

Gradescope unpacks the zip into /autograder/source, puts the submission in /autograder/submission
and runs ``run_autograder``, which calls Otter's ``run_autograder`` main. :func:`grade` makes that
layout in a scratch folder and runs the same main, so the course's tests run in-process as Otter
runs them there (the student's code and the tests in one process: see the README's "Gradescope").
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

GRADING_ENV = {"COURSE_QUICK": "1", "MPLBACKEND": "Agg"}


def grade(autograder_zip: Path, notebook: Path, scratch: Path, timeout: float = 600) -> dict:
    """Otter's results.json for ``notebook`` graded with ``autograder_zip``, Gradescope-style."""
    root = scratch / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as z:
        z.extractall(root / "source")
    (root / "submission" / notebook.name).write_bytes(notebook.read_bytes())
    env = {**os.environ, **GRADING_ENV}
    subprocess.run([sys.executable, "-c", "import sys; from otter.run.run_autograder import main; "
                    "main(sys.argv[1])", str(root)], cwd=scratch, env=env, check=True,
                   capture_output=True, text=True, timeout=timeout)
    return json.loads((root / "results" / "results.json").read_text())


def question_points(results: dict) -> dict[str, float]:
    """{question: points earned} from Otter's results.json (its tests are named by question)."""
    return {t["name"]: float(t["score"]) for t in results["tests"] if t["name"] != "Public Tests"}
