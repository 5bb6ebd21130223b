"""The autograder zip that `course build` writes grades on its own, the way Gradescope runs it.

Gradescope unpacks the zip into /autograder/source, puts the submission in
/autograder/submission and runs `run_autograder`: the course's check, then otter's run_autograder
main, then the check's second step. Here that layout is made in a temporary folder and the zip's
own run_autograder is run (autograder.gradescope.grade) on the 03 solution copied into a new
notebook (its otter metadata lost: full marks all the same), on the blank student notebook (no
marks; the hints of hidden tests, never their code) and on notebook 02 (refused, saying so).
"""
import json
import re
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version

from autograder import gradescope, submission_check
from instructor import build, release

NAME = "03_attention"


@pytest.fixture(scope="module")
def autograder_zip() -> Path:
    path = build.BUILD / f"{NAME}-autograder.zip"
    if not path.exists() or "submission_check.py" not in zipfile.ZipFile(path).namelist():
        build.assign(NAME)                             # missing, or made by an older build
    return path


def copied_into_new_notebook(path: Path, dest: Path) -> Path:
    """What a student gets by copying every cell into a fresh notebook: no otter metadata, new ids."""
    nb = nbformat.read(path, as_version=4)
    fresh = nbformat.v4.new_notebook()
    fresh.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    for i, cell in enumerate(nb.cells):
        cell = nbformat.from_dict(dict(cell))
        cell["id"] = f"copied{i:04d}"
        fresh.cells.append(cell)
    nbformat.write(fresh, dest)
    return dest


def _scores(results: dict) -> dict:
    return {t["name"]: (t["score"], t["max_score"]) for t in results["tests"] if t["name"] != "Public Tests"}


def test_zip_carries_the_course_package_the_cpu_torch_pins_quick_mode_and_the_check(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as z:
        names = set(z.namelist())
        env = yaml.safe_load(z.read("environment.yml"))
        run = z.read("run_autograder").decode()
        config = json.loads(z.read("otter_config.json"))
        check = json.loads(z.read("submission_check.json"))
    package = {f"files/course/{p.relative_to(build.ROOT / 'course').as_posix()}"
               for p in release.package_files(build.NAMES[:build.NAMES.index(NAME) + 1])}
    assert {n for n in names if n.startswith("files/course/")} == package    # the student package only
    assert "files/course/__main__.py" not in names and "files/course/__init__.py" in names
    assert {"submission_check.py", "notebook_info.py"} <= names
    assert not any("solution" in n.lower() and n.endswith(".ipynb") for n in names)
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert any(p.startswith("otter-grader") for p in pip)
    # torch: the CPU build, from PyTorch's CPU index (PyPI's torch 2.13.0 is the CUDA build and
    # does not satisfy the pin; the CPU wheel does)
    assert "--extra-index-url=https://download.pytorch.org/whl/cpu" in pip
    torch = [Requirement(p) for p in pip if p.startswith("torch")]
    assert len(torch) == 1 and Version("2.13.0+cpu") in torch[0].specifier
    assert Version("2.13.0") not in torch[0].specifier
    others = [p for p in build.pinned() if not p.startswith("torch")]
    assert set(others) <= set(pip)
    assert config["show_hidden"] is True and config["assignment_name"] == NAME
    assert check["name"] == NAME and check["known"]["02"] == "02_with_position" and len(check["given"]) >= 2
    assert run.index("export COURSE_QUICK=1") < run.index("submission_check.py before") \
        < run.index("run_otter.py") < run.index("submission_check.py after")


@pytest.fixture(scope="module")
def graded(autograder_zip, tmp_path_factory) -> dict:
    """results.json of the solution copied into a new notebook and of the blank notebook."""
    tmp = tmp_path_factory.mktemp("gradescope")
    copied = copied_into_new_notebook(build.BUILD / f"{NAME}-solution.ipynb", tmp / "Untitled.ipynb")
    assert "otter" not in nbformat.read(copied, as_version=4).metadata
    out = {"copied": gradescope.grade(autograder_zip, copied, tmp / "copied"),
           "blank": gradescope.grade(autograder_zip, build.NOTEBOOKS / f"{NAME}.ipynb", tmp / "blank")}
    assert (tmp / "copied" / "autograder" / "submission" / "course" / "__init__.py").exists(), \
        "files/course not copied"
    return out


def test_solution_that_lost_its_metadata_gets_full_marks_and_blank_none(graded):
    scores = _scores(graded["copied"])
    assert scores and all(score == top for score, top in scores.values()), scores
    assert "Autograder Error" not in {t["name"] for t in graded["copied"]["tests"]}
    assert f"graded as {NAME}" in graded["copied"]["output"]           # the student is told why
    scores = _scores(graded["blank"])
    assert scores and all(score == 0 for score, _ in scores.values()), scores
    assert "graded as" not in graded["blank"].get("output", "")     # its metadata was intact


def test_per_question_results_shown_after_publication_with_hints_but_no_hidden_code(graded):
    for results in graded.values():
        visibility = {t["name"]: t["visibility"] for t in results["tests"]}
        assert visibility.pop("Public Tests") == "visible"
        assert visibility and set(visibility.values()) == {"after_published"}, visibility
    q1 = next(t["output"] for t in graded["blank"]["tests"] if t["name"] == "q1")
    hidden = submission_check.hidden_cases(str(build.AUTOGRADER / NAME / "tests"))
    assert "q1 - 2" in hidden and "q1 - 1" not in hidden
    blocks = dict(re.findall(r"(?ms)^    (q1 - \d) result:\n(.*?)(?=^    q1 - \d |\Z)", q1))
    assert set(blocks) == {f"q1 - {i}" for i in range(1, 7)}, q1
    for case, block in blocks.items():
        assert "Test case failed" in block
        # a failed hidden case shows its hint and error, never the line of hidden code Otter quotes
        assert ("Error at line" in block) == (case not in hidden), block
        assert ("(the hidden test's code is not shown)" in block) == (case in hidden), block
    assert "q1 - 2 message: For random sizes" in q1 and "Is the softmax over the last index (j)?" in q1


def _refused(autograder_zip, notebook: Path, tmp: Path) -> dict:
    results = gradescope.grade(autograder_zip, notebook, tmp, name="my submission.ipynb")
    assert not (tmp / "autograder" / "results" / "results.pkl").exists(), "Otter ran"
    return results


def test_another_weeks_notebook_is_refused_saying_which_it_is(autograder_zip, tmp_path):
    expected = "this is 02_with_position, not 03_attention"
    lost = copied_into_new_notebook(build.NOTEBOOKS / "02_with_position.ipynb", tmp_path / "02.ipynb")
    for i, notebook in enumerate([lost, build.NOTEBOOKS / "02_with_position.ipynb"]):
        results = _refused(autograder_zip, notebook, tmp_path / str(i))
        assert results["score"] == 0 and expected in results["output"]
        assert [t["visibility"] for t in results["tests"]] == ["visible"]
        assert expected in results["tests"][0]["output"]
        assert "Submit your 03_attention.ipynb" in results["output"]


def test_strip_hidden_code_keeps_public_lines_and_hints():
    text = ("q1 results:\n    test_pub result:\n        ❌ Test case failed\n"
            "        Error at line 3 in test q1:\n          assert public_line\n        AssertionError: a\n\n"
            "    test_hid message: the hint\n\n    test_hid result:\n        ❌ Test case failed\n"
            "        Error at line 9 in test q1:\n          assert secret_line\n        AssertionError: b")
    out = submission_check.strip_hidden_code(text, {"test_hid"})
    assert "public_line" in out and "secret_line" not in out
    assert "the hint" in out and "AssertionError: b" in out


def _check_layout(tmp: Path, nb_text: str) -> Path:
    """/autograder as Gradescope lays it out for the check: this repository's submission_check.py and
    notebook_info.py with this week's submission_check.json in source/, the notebook in submission/."""
    root = tmp / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    for name in build.CHECK_FILES:
        (root / "source" / name).write_bytes((Path(submission_check.__file__).parent / name).read_bytes())
    (root / "source" / "submission_check.json").write_text(json.dumps(build.check_config(NAME)))
    (root / "submission" / "sub.ipynb").write_text(nb_text, encoding="utf-8")
    return root


def test_before_restores_metadata_of_a_notebook_with_a_lone_surrogate_whole(tmp_path):
    """Red team 3 A10: json.dump(ensure_ascii=False) raised on a lone surrogate after open(path, "w")
    had emptied the submission; exit 1, and Otter graded the cut-off file."""
    import subprocess
    import sys
    nb = json.loads((build.NOTEBOOKS / f"{NAME}.ipynb").read_text(encoding="utf-8"))
    nb["metadata"].pop("otter", None)
    nb["cells"][0]["source"] = "PLACEHOLDER"
    root = _check_layout(tmp_path, json.dumps(nb).replace('"PLACEHOLDER"', '"\\ud800 a note"'))
    res = subprocess.run([sys.executable, "submission_check.py", "before", str(root)], cwd=root / "source",
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert f"graded as {NAME}" in res.stdout
    saved = json.loads((root / "submission" / "sub.ipynb").read_text(encoding="utf-8"))
    assert saved["metadata"]["otter"]["assignment_name"] == NAME
    assert saved["cells"][0]["source"] == "\ud800 a note" and len(saved["cells"]) == len(nb["cells"])
    assert [p.name for p in (root / "submission").iterdir()] == ["sub.ipynb"]


def test_a_failed_rewrite_leaves_the_submission_untouched(tmp_path, monkeypatch):
    nb = json.loads((build.NOTEBOOKS / f"{NAME}.ipynb").read_text(encoding="utf-8"))
    nb["metadata"].pop("otter", None)
    text = json.dumps(nb)
    root = _check_layout(tmp_path, text)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(submission_check.json, "dump", full)
    assert submission_check.before(str(root)) == 0
    assert (root / "submission" / "sub.ipynb").read_text(encoding="utf-8") == text
    assert [p.name for p in (root / "submission").iterdir()] == ["sub.ipynb"]
    assert not (root / submission_check.NOTE).exists()
