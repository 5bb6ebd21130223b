"""The autograder zip that `course build` writes grades on its own, the way Gradescope runs it.

Gradescope unpacks the zip into /autograder/source, puts the submission in
/autograder/submission and runs `run_autograder`, which calls otter's run_autograder main.
Here that layout is made in a temporary folder and the same main is run on the 03 solution
(full marks) and on the blank student notebook (no marks).
"""
import zipfile
from pathlib import Path

import pytest
import yaml

from autograder import gradescope
from course import build

NAME = "03_attention"


@pytest.fixture(scope="module")
def autograder_zip() -> Path:
    path = build.BUILD / f"{NAME}-autograder.zip"
    if not path.exists():
        build.assign(NAME)
    return path


def test_zip_carries_the_course_package_the_pins_and_quick_mode(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as z:
        names = set(z.namelist())
        env = yaml.safe_load(z.read("environment.yml"))
        run = z.read("run_autograder").decode()
    package = {f"files/course/{p.relative_to(build.ROOT / 'course').as_posix()}"
               for p in (build.ROOT / "course").rglob("*.py")}
    assert package <= names
    assert not any("solution" in n.lower() and n.endswith(".ipynb") for n in names)
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "torch==2.13.0" in pip and any(p.startswith("otter-grader") for p in pip)
    assert set(build.pinned()) <= set(pip)
    assert run.index("export COURSE_QUICK=1") < run.index("run_otter.py")


def _grade_like_gradescope(autograder_zip: Path, notebook: Path, tmp: Path) -> dict:
    tmp.mkdir(parents=True)
    results = gradescope.grade(autograder_zip, notebook, tmp)
    assert (tmp / "autograder" / "submission" / "course" / "__init__.py").exists(), "files/course not copied"
    return results


def _scores(results: dict) -> dict:
    return {t["name"]: (t["score"], t["max_score"]) for t in results["tests"] if t["name"] != "Public Tests"}


def test_solution_gets_full_marks_and_blank_none(autograder_zip, tmp_path):
    solution = build.BUILD / f"{NAME}-solution.ipynb"
    scores = _scores(_grade_like_gradescope(autograder_zip, solution, tmp_path / "solution"))
    assert scores and all(score == top for score, top in scores.values()), scores
    blank = build.NOTEBOOKS / f"{NAME}.ipynb"
    scores = _scores(_grade_like_gradescope(autograder_zip, blank, tmp_path / "blank"))
    assert scores and all(score == 0 for score, _ in scores.values()), scores
