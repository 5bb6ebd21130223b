"""A fake Google Colab for the tests: a fresh Python that has only what Colab gives (torch, numpy,
matplotlib, tqdm, requests and a Jupyter kernel: no `course`, no `otter`) with `google.colab` faked,
a folder served on 127.0.0.1 as the course's download address, and notebooks run in its kernel as
"Run all" runs them.

The environment is a new venv whose site-packages points (a .pth file) at a folder of links to just
those packages and what they need, taken from this venv; the setup cell pip-installs otter-grader
into it as on Colab (from the package index pip is configured with). `google.colab` is put into
sys.modules and the kernel's shell is named like Colab's, so Otter runs in its Colab mode too.
"""
from __future__ import annotations

import http.server
import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

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


def closure(roots) -> list[md.Distribution]:
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
    for dist in closure(COLAB_HAS):
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
                                      cwd=where, env=clean_env(where)).stdout)
    assert found == {"torch": True, "ipykernel": True, "otter": False, "course": False,
                     "autograder": False, "nbgrader": False}, found
    return python


def clean_env(home: Path, **extra: str) -> dict[str, str]:
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


def kernel(tmp_path: Path, python: Path, monkeypatch, **extra: str) -> str:
    """A kernelspec for the fake Colab's python, with Colab's startup (and `extra` in its
    environment)."""
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-colab.py").write_text(COLAB_STARTUP)
    spec = tmp_path / "jupyter" / "kernels" / "fakecolab"
    spec.mkdir(parents=True)
    env = {"IPYTHONDIR": str(tmp_path / "ipython"), "PYTHONNOUSERSITE": "1", "PYTHONPATH": "",
           "HOME": str(tmp_path), "MPLBACKEND": "Agg", **extra}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "fake Colab", "language": "python", "env": env}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    for name in [k for k in os.environ if k.startswith("COURSE_")]:
        monkeypatch.delenv(name)
    return "fakecolab"


def run_all(nb, kernel: str, cwd: Path, then: int | None = None, stop: bool = True,
            skip: Callable[[Any], bool] = lambda cell: False):
    """Run the cells in order and stop at the first error, as Jupyter's and Colab's "Run all" do
    (`stop=False`: go on); cells for which `skip` holds are left alone; then, if asked, run cell
    `then` by hand in the same kernel. Returns the executed cells."""
    from nbclient import NotebookClient

    cwd.mkdir(parents=True, exist_ok=True)
    client = NotebookClient(nb, kernel_name=kernel, timeout=600, allow_errors=True,
                            resources={"metadata": {"path": str(cwd)}})
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and not skip(cell):
                client.execute_cell(cell, index)
                if stop and any(o.output_type == "error" for o in cell.outputs):
                    break
        if then is not None:
            client.execute_cell(nb.cells[then], then)
    return nb.cells


def text(cell) -> str:
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


def errors(cells) -> list[tuple[int, dict]]:
    return [(i, o) for i, c in enumerate(cells) for o in c.get("outputs", []) if o.output_type == "error"]


