"""Real hostile (and ordinary) submissions of the toy assignment, for the tests of ``course grade``.

Each builder returns notebook bytes; :func:`write_class` writes a whole class into a folder and
returns ``{file: expectation}`` so that the tests know what each row must say.
"""
from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "00_toy"
SOLUTION = FIXTURE / "00_toy-solution.ipynb"
BLANK = FIXTURE / "00_toy.ipynb"
MARKER = "course-grade-test-escapee"
SLEEP = "613.4242"  # an unusual duration, to find the forked sleepers afterwards


def load(path: Path = SOLUTION) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def dump(nb: dict) -> bytes:
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode()


def code_cell(src: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": src.splitlines(keepends=True)}


def with_cells(before: list[str] | None = None, after: list[str] | None = None, base: Path = SOLUTION,
               at: int = 2) -> bytes:
    """The solution (or ``base``) with extra code cells inserted after its setup cell and at the end."""
    nb = load(base)
    for i, src in enumerate(before or []):
        nb["cells"].insert(at + i, code_cell(src))
    nb["cells"] += [code_cell(src) for src in after or []]
    return dump(nb)


def replace_answer(name: str, new_src: str) -> bytes:
    """The solution with the cell defining ``name`` replaced."""
    nb = load()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and f"def {name}(" in "".join(cell["source"]):
            cell["source"] = new_src.splitlines(keepends=True)
    return dump(nb)


def without_question(q: str, name: str) -> bytes:
    """The solution with a question's answer cell and check cell deleted."""
    nb = load()
    nb["cells"] = [c for c in nb["cells"] if not (
        c["cell_type"] == "code" and (f"def {name}(" in "".join(c["source"])
                                      or f'grader.check("{q}")' in "".join(c["source"])))]
    return dump(nb)


def colab(nb_bytes: bytes) -> bytes:
    """As Colab saves it: no cell ids, Colab metadata, sources as strings, outputs kept."""
    nb = json.loads(nb_bytes)
    nb["nbformat_minor"] = 0
    nb["metadata"] = {"colab": {"provenance": [], "name": "00_toy.ipynb"},
                      "kernelspec": {"name": "python3", "display_name": "Python 3"},
                      "language_info": {"name": "python"}, "accelerator": "GPU"}
    for i, cell in enumerate(nb["cells"]):
        cell.pop("id", None)
        cell["metadata"] = {"id": f"cell{i}", **({"tags": cell["metadata"]["tags"]}
                                                   if "tags" in cell.get("metadata", {}) else {})}
        cell["source"] = "".join(cell["source"])
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "hello\n"}]
    return dump(nb)


def big_image_output(mb: int = 60) -> bytes:
    """The solution saved with a ``mb`` MB image in one cell's outputs."""
    nb = load()
    png = base64.b64encode(b"\x89PNG" + b"\0" * (mb * 2**20 * 3 // 4)).decode()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [{"output_type": "display_data", "metadata": {}, "data": {"image/png": png}}]
            break
    return dump(nb)


def nbformat3() -> bytes:
    return dump({"metadata": {"name": ""}, "nbformat": 3, "nbformat_minor": 0, "worksheets": [
        {"cells": [{"cell_type": "code", "input": "print(1)", "language": "python", "outputs": []}]}]})


class _NoFlagInfo(zipfile.ZipInfo):
    """A member name written as UTF-8 bytes without the UTF-8 flag (as many Windows tools do)."""

    def _encodeFilenameFlags(self):  # noqa: N802 - zipfile's own name
        return self.filename.encode("utf-8"), self.flag_bits & ~0x800


def zip_of(members: dict[str, bytes], utf8_names: bool = True) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name) if utf8_names else _NoFlagInfo(name), data)
    return buf.getvalue()


SNOOP = """
import os, glob
secrets = {SECRETS!r}
found = []
for p in secrets:
    try:
        if os.path.isdir(p):
            found.append((p, sorted(os.listdir(p))[:3]))
        else:
            with open(p, 'rb') as f:
                found.append((p, f.read(20)))
    except OSError:
        pass
for p in secrets:
    try:
        with open(os.path.join(p, 'grades.csv') if os.path.isdir(p) else p, 'a') as f:
            f.write('hacked,5,5,5,,15,1.0,ok')
        found.append(('wrote', p))
    except OSError:
        pass
for pid in (1, os.getppid()):
    try:
        os.kill(pid, 9)
        found.append(('killed', pid))
    except OSError:
        pass
print('SNOOPED', found)
"""

ESCAPE = """
import os, subprocess, sys, time
# a process in a new session, and a double fork that calls setsid: both must be gone after grading
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{MARKER}'], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', '{MARKER}'])
    os._exit(0)
n = 0
for _ in range(400):  # more children than the process limit allows
    try:
        subprocess.Popen(['sleep', '{SLEEP}'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        n += 1
    except OSError:
        break
print('forked', n)
"""

FORGE = """
import json, os
fake = [{'t': 'case', 'q': 'q1', 'i': 0, 'passed': True, 'message': 'ok'},
        {'t': 'done', 'tamper': []}]
for fd in range(3, 40):
    for m in fake:
        try:
            os.write(fd, (json.dumps(m) + '\\n').encode())
        except OSError:
            pass
"""


def write_class(folder: Path, secrets: list[str]) -> dict[str, dict]:
    """Write the hostile class into ``folder``; returns ``{file: expected}``."""
    folder.mkdir(parents=True, exist_ok=True)
    sol = SOLUTION.read_bytes()
    blank = BLANK.read_bytes()
    subs: dict[str, tuple[bytes, dict]] = {
        "good.ipynb": (sol, {"status": "ok", "total": 5.0}),
        "blank.ipynb": (blank, {"status": "ok", "total": 0.0}),
        "buggy softmax.ipynb": (replace_answer("Softmax", "def Softmax(x):\n    e = torch.exp(x)\n"
                                                           "    return e / e.sum(0, keepdim=True)\n"),
                                {"status": "ok", "q1": 1.0, "total": 4.0}),
        "Zoë Ångström ünïcode.ipynb": (sol, {"status": "ok", "total": 5.0}),
        "colab.ipynb": (colab(sol), {"status": "ok", "total": 5.0}),
        "not_json.ipynb": (b"this is not a notebook {", {"status": "unreadable notebook: not valid JSON",
                                                          "total": 0.0}),
        "empty.ipynb": (b"", {"status": "unreadable notebook: empty file", "total": 0.0}),
        "braces.ipynb": (b"{}", {"status": "unreadable notebook: not a notebook (no cells)", "total": 0.0}),
        "old_format.ipynb": (nbformat3(), {"status": "unreadable notebook: nbformat 3 is too old (needs 4)",
                                           "total": 0.0}),
        "deleted_cells.ipynb": (without_question("q2", "FitLine"),
                                {"status": "cells deleted: no check cell for q2", "q2": 0.0, "total": 3.0}),
        "sys_exit.ipynb": (with_cells(["import sys\nsys.exit('bye')"]),
                           {"status_start": "sys.exit() in cell", "total": 5.0}),
        "os_exit.ipynb": (with_cells(["import os\nos._exit(3)"]),
                          {"status_start": "process exited in cell", "total": 0.0}),
        "infinite_loop.ipynb": (with_cells(["while True:\n    pass"]),
                                {"status_start": "cell timeout: cell", "total": 5.0}),
        "stubborn_loop.ipynb": (with_cells(["import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                            "while True:\n    try:\n        pass\n"
                                            "    except BaseException:\n        pass"]),
                                {"status_start": "timeout: cell", "total": 0.0}),
        "memory_hog.ipynb": (with_cells(["hog = bytearray(64 * 2**30)",
                                         "import torch\nhog = torch.ones(2**36)"]),
                             {"status_start": "memory limit: cell", "total": 5.0}),
        "print_flood.ipynb": (with_cells(["for _ in range(100):\n    print('x' * 2**20)"]),
                              {"status": "ok", "total": 5.0}),
        "big_image.ipynb": (big_image_output(60), {"status": "ok", "total": 5.0}),
        "tamper_allclose.ipynb": (with_cells(["import torch\ntorch.allclose = lambda *a, **k: True"],
                                             base=BLANK),
                                  {"status_start": "tampering detected: torch.allclose was replaced",
                                   "total": 0.0}),
        "tamper_tensor.ipynb": (with_cells(after=["import torch\n"
                                                  "torch.Tensor.__eq__ = lambda self, other: True"]),
                                {"status_start": "tampering detected: torch.Tensor.__eq__", "total": 0.0}),
        "tamper_course.ipynb": (with_cells(after=["import course.two_sentences as ts\n"
                                                  "ts.Encode.__code__ = (lambda s: []).__code__"]),
                                {"status_start": "tampering detected: the code of course", "total": 0.0}),
        "forge.ipynb": (with_cells([FORGE], base=BLANK),
                        {"status": "tampering detected: malformed message from the notebook's process "
                                   "(an unknown message 'case')", "total": 0.0}),
        # full marks (the answers are right), flagged for the instructor (they reach for the machine)
        "snoop.ipynb": (with_cells(after=[SNOOP.replace("{SECRETS!r}", repr(secrets))]),
                        {"status_start": "suspicious code: ", "total": 5.0}),
        "escape.ipynb": (with_cells(after=[ESCAPE.replace("{MARKER}", MARKER).replace("{SLEEP}", SLEEP)]),
                         {"status_start": "suspicious code: ", "total": 5.0}),
    }
    expected = {}
    for name, (data, exp) in subs.items():
        (folder / name).write_bytes(data)
        expected[name] = exp
    # LMS bulk downloads (beside the folder: an instructor gives them on the command line, see
    # bulk_downloads; a zip found in a folder is one student's upload) and a one-notebook zip
    bulk = folder.parent / "bulk"
    bulk.mkdir(exist_ok=True)
    (bulk / "canvas.zip").write_bytes(zip_of({
        "smithjohn_12345_67890_00_toy.ipynb": sol, "doejane_222_333_00_toy-1.ipynb": blank}))
    expected["smithjohn_12345_67890_00_toy.ipynb"] = {"status": "ok", "total": 5.0}
    expected["doejane_222_333_00_toy-1.ipynb"] = {"status": "ok", "total": 0.0}
    (bulk / "moodle.zip").write_bytes(zip_of({
        "Renée Dupont_1234_assignsubmission_file_/00_toy.ipynb": sol,
        "Li Wei_5678_assignsubmission_file_/my notebook.ipynb": b"garbage",
        "__MACOSX/._junk.ipynb": b"junk"}, utf8_names=False))
    expected["Renée Dupont_1234_assignsubmission_file_/00_toy.ipynb"] = {"status": "ok", "total": 5.0}
    expected["Li Wei_5678_assignsubmission_file_/my notebook.ipynb"] = {
        "status": "unreadable notebook: not valid JSON", "total": 0.0}
    (folder / "alice upload.zip").write_bytes(zip_of({"whatever/00_toy.ipynb": sol}))
    expected["alice upload.zip"] = {"status": "ok", "total": 5.0}
    assert sorted(expected) == sorted(NAMES)
    return expected


def bulk_downloads(folder: Path) -> list[Path]:
    """The LMS bulk downloads :func:`write_class` wrote beside ``folder``."""
    return sorted((folder.parent / "bulk").glob("*.zip"))


NAMES = ["good.ipynb", "blank.ipynb", "buggy softmax.ipynb", "Zoë Ångström ünïcode.ipynb", "colab.ipynb",
         "not_json.ipynb", "empty.ipynb", "braces.ipynb", "old_format.ipynb", "deleted_cells.ipynb",
         "sys_exit.ipynb", "os_exit.ipynb", "infinite_loop.ipynb", "stubborn_loop.ipynb", "memory_hog.ipynb",
         "print_flood.ipynb", "big_image.ipynb", "tamper_allclose.ipynb", "tamper_tensor.ipynb",
         "tamper_course.ipynb", "forge.ipynb", "snoop.ipynb", "escape.ipynb",
         "smithjohn_12345_67890_00_toy.ipynb", "doejane_222_333_00_toy-1.ipynb",
         "Renée Dupont_1234_assignsubmission_file_/00_toy.ipynb",
         "Li Wei_5678_assignsubmission_file_/my notebook.ipynb", "alice upload.zip"]
