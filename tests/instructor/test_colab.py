"""A student on Colab, end to end: `course release` output served on 127.0.0.1, a student notebook
run in a fresh environment that has only what Colab gives (torch, numpy, matplotlib, tqdm, requests
and a Jupyter kernel: no `course`, no `otter`) with `google.colab` faked.

The environment is a new venv whose site-packages points (a .pth file) at a folder of links to just
those packages and what they need, taken from this venv; the setup cell pip-installs otter-grader
into it as on Colab (from the package index pip is configured with). `google.colab` is put into
sys.modules and the kernel's shell is named like Colab's, so Otter runs in its Colab mode too.
"""
import http.server
import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

from instructor import build, publish, release

pytestmark = pytest.mark.e2e

NAME = "03_attention"
# What a Colab runtime has that the notebooks use, and the kernel.
COLAB_HAS = ("torch", "numpy", "matplotlib", "tqdm", "requests", "ipykernel")
FAKE_COLAB = "import sys, types; sys.modules['google.colab'] = types.ModuleType('google.colab')\n"
# An IPython startup file: Colab's kernel has google.colab imported and its shell is
# google.colab._shell.Shell (which is how Otter knows it runs on Colab).
COLAB_STARTUP = FAKE_COLAB + """\
_ip = get_ipython()
_ip.__class__ = type("Shell", (type(_ip),), {"__module__": "google.colab._shell"})
del _ip
"""


def _closure(roots) -> list[md.Distribution]:
    """The installed distributions `roots` need, themselves included (no extras)."""
    seen: dict[str, md.Distribution] = {}
    todo = list(roots)
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in seen:
            continue
        try:
            seen[name] = dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        for text in dist.requires or []:
            req = Requirement(text)
            if not req.marker or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(seen.values())


def fake_colab(where: Path) -> Path:
    """A venv with only COLAB_HAS (and what they need) importable; returns its python."""
    links = where / "colab-packages"
    links.mkdir(parents=True)
    for dist in _closure(COLAB_HAS):
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            source = Path(dist.locate_file(top))
            if source.exists() and not top.endswith(".pth") and not (links / top).exists():
                (links / top).symlink_to(source)
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "colab-packages.pth").write_text(f"{links}\n")
    probe = ("import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not None "
             "for m in ['torch', 'ipykernel', 'otter', 'course', 'autograder', 'nbgrader']}))")
    found = json.loads(subprocess.run([python, "-c", probe], check=True, capture_output=True, text=True,
                                      cwd=where, env=_clean_env(where)).stdout)
    assert found == {"torch": True, "ipykernel": True, "otter": False, "course": False,
                     "autograder": False, "nbgrader": False}, found
    return python


def _clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "COURSE_", "JUPYTER", "IPYTHON"))}
    return {**env, "HOME": str(home), "PYTHONNOUSERSITE": "1", "MPLBACKEND": "Agg", **extra}


class Served:
    """A folder served over HTTP on 127.0.0.1 from a thread."""

    def __init__(self, folder: Path):
        handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
        handler.func.log_message = lambda *a: None
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


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


def _kernel(tmp_path: Path, python: Path, monkeypatch) -> str:
    """A kernelspec for the fake Colab's python, with Colab's startup."""
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-colab.py").write_text(COLAB_STARTUP)
    spec = tmp_path / "jupyter" / "kernels" / "fakecolab"
    spec.mkdir(parents=True)
    env = {"IPYTHONDIR": str(tmp_path / "ipython"), "PYTHONNOUSERSITE": "1", "PYTHONPATH": "",
           "HOME": str(tmp_path), "MPLBACKEND": "Agg"}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "fake Colab", "language": "python", "env": env}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    for name in [k for k in os.environ if k.startswith("COURSE_")]:
        monkeypatch.delenv(name)
    return "fakecolab"


def _run_all(nb, kernel: str, cwd: Path, then: int | None = None):
    """Run the cells in order and stop at the first error, as Jupyter's and Colab's "Run all" do;
    then, if asked, run cell `then` by hand in the same kernel. Returns the executed cells."""
    from nbclient import NotebookClient

    cwd.mkdir(parents=True, exist_ok=True)
    client = NotebookClient(nb, kernel_name=kernel, timeout=600, allow_errors=True,
                            resources={"metadata": {"path": str(cwd)}})
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, index)
                if any(o.output_type == "error" for o in cell.outputs):
                    break
        if then is not None:
            client.execute_cell(nb.cells[then], then)
    return nb.cells


def _text(cell) -> str:
    """A cell's output as a notebook shows it (stream pieces run on, as printed)."""
    parts = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type in ("execute_result", "display_data"):
            parts.append(o.data.get("text/plain", "") + "\n")
        elif o.output_type == "error":
            parts.append("\n".join(o.traceback) + "\n")
    return "".join(parts)


def _errors(cells) -> list[tuple[int, dict]]:
    return [(i, o) for i, c in enumerate(cells) for o in c.get("outputs", []) if o.output_type == "error"]


def test_a_student_notebook_on_colab(tmp_path, served, monkeypatch):
    public, url = served
    python = fake_colab(tmp_path / "colab")
    kernel = _kernel(tmp_path, python, monkeypatch)

    # the address in the notebook is right: the course is downloaded, the grader installed with
    # progress, a correct answer passes its check and a wrong one does not
    nb = _student_notebook(public, f"{url}/{publish.BUNDLE_NAME}")
    cells = _run_all(nb, kernel, tmp_path / "content")
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
    cells = _run_all(nb, kernel, tmp_path / "content-2", then=last)
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
