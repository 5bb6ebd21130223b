"""A student on Colab, end to end: `course release` output served on 127.0.0.1, a student notebook
run in a fresh environment that has only what Colab gives with `google.colab` faked
(tests/support/colab.py).
"""
import os
import re
import subprocess
from pathlib import Path

import nbformat
import pytest
from colab import FAKE_COLAB, Served, fake_colab, run_all
from colab import clean_env as _clean_env
from colab import errors as _errors
from colab import kernel as _kernel
from colab import text as _text

from instructor import build, publish, release

pytestmark = pytest.mark.e2e

NAME = "03_attention"


@pytest.fixture
def served(tmp_path):
    """`course release --upto 03_attention` output, served."""
    out = tmp_path / "public"
    release.write_release(out, release.released_names(NAME))
    server = Served(out)
    yield out, server.url
    server.close()


def _setup_for(url: str) -> str:
    """The setup cell `course build` writes when course.toml's bundle_url is `url`."""
    return build.setup_code(NAME, publish.Publish("someone/course", bundle_url=url))


def _run_setup_only(python: Path, cwd: Path, url: str, **env: str) -> subprocess.CompletedProcess:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run([python, "-c", FAKE_COLAB + _setup_for(url)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=_clean_env(cwd, **env))


def _failure(out: subprocess.CompletedProcess) -> str:
    assert out.returncode != 0, out.stdout
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("SetupFailed: "), out.stderr[-2000:]
    assert "NameError" not in out.stderr
    return last.removeprefix("SetupFailed: ")


def test_setup_cell_says_what_failed_in_one_sentence(tmp_path, served):
    """Wrong address, no network, not the bundle, pip failing: one sentence each, naming what to do."""
    out, url = served
    python = fake_colab(tmp_path / "colab")
    said = _failure(_run_setup_only(python, tmp_path / "a", f"{url}/nothing-here.zip"))
    assert said.startswith(f"the course is not at {url}/nothing-here.zip (the server says 404")
    assert "tell your instructor" in said
    said = _failure(_run_setup_only(python, tmp_path / "b", "http://127.0.0.1:9/course-student.zip"))
    assert said.startswith("cannot reach http://127.0.0.1:9/course-student.zip (")
    assert "connected to the internet, then run this cell again" in said
    said = _failure(_run_setup_only(python, tmp_path / "c", f"{url}/README.md"))
    assert "did not send the course (not a zip file)" in said
    # the bundle is fine, pip cannot install the grader (an index with nothing on it)
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    result = _run_setup_only(python, tmp_path / "d", f"{url}/{publish.BUNDLE_NAME}",
                             PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(empty))
    said = _failure(result)
    assert said.startswith("installing the grader failed (ERROR: ") and "otter-grader" in said
    assert "Installing the grader (otter-grader==7.0.0)" in result.stdout
    assert (tmp_path / "d" / "transformer-course" / "notebooks" / "tests" / NAME).is_dir()


def _student_notebook(public: Path, url: str) -> nbformat.NotebookNode:
    """The released notebook up to q1's check, set up for `url`, with q1 answered correctly and then
    wrongly (no softmax), each followed by grader.check("q1")."""
    nb = nbformat.read(public / "notebooks" / f"{NAME}.ipynb", as_version=4)
    check = next(i for i, c in enumerate(nb.cells) if c.source.strip() == 'grader.check("q1")')
    nb.cells = nb.cells[:check + 1]
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "setup" in tags:
            cell.source = _setup_for(url)
        elif "reference" in tags:
            cell.source = build.reference_code(NAME)[0]
    wrong = ("def Attention(q, k, v):\n"
             "    weights = q @ k.transpose(-2, -1)   # no softmax\n"
             "    return weights @ v, weights")
    nb.cells += [nbformat.v4.new_code_cell(wrong), nbformat.v4.new_code_cell('grader.check("q1")')]
    return nb


def test_a_student_notebook_on_colab(tmp_path, served, monkeypatch):
    public, url = served
    python = fake_colab(tmp_path / "colab")
    kernel = _kernel(tmp_path, python, monkeypatch)

    # the address in the notebook is right: the course is downloaded, the grader installed with
    # progress, a correct answer passes its check and a wrong one does not
    nb = _student_notebook(public, f"{url}/{publish.BUNDLE_NAME}")
    cells = run_all(nb, kernel, tmp_path / "content")
    assert not _errors(cells), _errors(cells)
    setup = next(c for c in cells if "setup" in c.metadata.get("tags", []))
    said = _text(setup)
    assert f"Downloading the course from {url}/{publish.BUNDLE_NAME}" in said
    assert re.search(r"Installing the grader \(otter-grader==7\.0\.0\).*\n  collecting otter", said), said
    assert re.search(r"installed in \d+ s", said) and "Ready: torch" in said
    checks = [_text(c) for c in cells if c.source.strip() == 'grader.check("q1")']
    assert len(checks) == 2
    assert checks[0].strip() == "q1 results: All test cases passed!", checks[0]
    assert checks[1].startswith("q1 results:") and "All test cases passed" not in checks[1], checks[1]
    assert "the rows of the weights do not add up to one" in checks[1], checks[1]
    installed = subprocess.run([python, "-c", "import otter; print(otter.__file__)"], capture_output=True,
                               text=True, cwd=tmp_path / "content", env=_clean_env(tmp_path))
    assert installed.stdout.startswith(str(tmp_path / "colab" / "venv")), installed
    assert (tmp_path / "content" / "transformer-course" / "course" / "__init__.py").is_file()

    # a wrong address: one short error, "Run all" stops there, and a later cell run by hand says
    # to run the setup cell instead of showing a NameError traceback
    nb = _student_notebook(public, f"{url}/wrong/{publish.BUNDLE_NAME}")
    last = len(nb.cells) - 1
    cells = run_all(nb, kernel, tmp_path / "content-2", then=last)
    errors = _errors(cells)
    first = next(i for i, c in enumerate(cells) if "setup" in c.metadata.get("tags", []))
    assert [i for i, _ in errors] == [first, last], errors
    failed = errors[0][1]
    assert failed.ename == "SetupFailed" and len(failed.traceback) == 1
    assert failed.traceback[0].startswith(f"Setup failed: the course is not at {url}/wrong/")
    assert all(c.execution_count is None for c in cells[first + 1:last] if c.cell_type == "code")
    later = errors[1][1]
    assert later.ename == "NameError" and later.traceback == [
        "NameError: name 'grader' is not defined. The setup cell has not worked yet: run it, "
        "do what it says."]
