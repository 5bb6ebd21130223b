"""What students get: no answer of the week and no hidden test leaks into notebooks/ or the
bundle, the bundle is reproducible, and the setup cell installs the course from a served bundle.
A release ships the student package only, and gives away only what it says."""
import ast
import functools
import http.server
import inspect
import json
import os
import re
import subprocess
import sys
import threading
import zipfile
from functools import partial
from pathlib import Path

import nbformat
import pytest
from otter.test_files.exception_test import ExceptionTestFile

from autograder import shipped
from instructor import build, cli, giveaway, masters
from instructor.release import BUNDLE_NAME, write_bundle

ROOT = build.ROOT
PAGE = Path(os.environ.get("COURSE_SHARED") or ROOT.parent / "shared") / "seeds" / "000_6bd8e58f056863d1.txt"
BUILT = [n for n in build.masters() if (ROOT / "notebooks" / f"{n}.ipynb").exists()]
pytestmark = pytest.mark.skipif(not BUILT, reason="no built notebooks yet")


def _lines(text: str) -> set[str]:
    """Lines worth comparing: long enough to be specific, not comments or blank."""
    out = set()
    for line in text.splitlines():
        line = line.strip()
        if len(line) >= 20 and not line.startswith("#"):
            out.add(line)
    return out


def _notebook_text(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells)


def _public_lines(name: str) -> set[str]:
    """What a student may see anyway: the page, what the masters up to this one show, and the
    earlier weeks' reference answers."""
    page = _lines(PAGE.read_text()) if PAGE.exists() else set()
    shown = set()
    for earlier in build.registry.upto(name):
        if earlier in build.masters():
            shown |= _lines(masters.shown_text(build.read_master(earlier)))
    return page | shown | _lines("\n".join(build.earlier_reference_code(name)))


def _answer_lines(name: str) -> set[str]:
    """The answers of a master as otter removes them: a code cell's marked lines, a markdown cell whole."""
    text = []
    for cell in masters.answer_cells(build.read_master(name)):
        source = masters.cell_source(cell)
        text.append(masters.split_solution(source)[0] if cell.cell_type == "code" else source)
    return _lines("\n".join(text)) - _public_lines(name)


@functools.cache
def _test_lines(name: str) -> tuple[set[str], set[str]]:
    """The lines of the notebook's hidden test cases and of its public ones."""
    hidden, public = set(), set()
    for path in sorted((ROOT / "autograder" / "assignments" / name / "tests").glob("*.py")):
        test_file = ExceptionTestFile.from_file(str(path))
        for case in test_file.test_cases:
            body = {line for line in _lines(inspect.getsource(case.body.test_func))
                    if not line.startswith("@test_case")}
            (hidden if case.hidden else public).update(body)
    return hidden, public


def _hidden_test_lines(name: str) -> set[str]:
    """Hidden lines less what students see anyway: a line that any notebook's public test or any
    notebook shows (``Head = student(Head)``, ``torch.manual_seed(1)``) is no secret of this one's."""
    shown = set().union(*(_test_lines(n)[1] for n in BUILT))
    return _test_lines(name)[0] - shown - _public_lines(build.registry.notebooks()[-1])


@pytest.mark.parametrize("name", BUILT)
def test_every_master_has_answers_and_hidden_tests(name):
    assert _answer_lines(name), f"{name}: no answer lines found in the master"
    assert _hidden_test_lines(name), f"{name}: no hidden test lines found"


@pytest.mark.parametrize("name", BUILT)
def test_no_answer_of_the_week_in_what_students_have_by_then(name):
    answers = _answer_lines(name)
    places = [ROOT / "notebooks" / f"{m}.ipynb" for m in BUILT if m[:2] <= name[:2]]
    places += sorted((ROOT / "notebooks" / "tests").rglob("*.py"))
    for path in places:
        text = _notebook_text(path) if path.suffix == ".ipynb" else path.read_text()
        leaked = answers & _lines(text)
        assert not leaked, f"answer lines of {name} appear in {path.relative_to(ROOT)}: {leaked}"
    # the course package may show how to use its own helpers (SaveModel, ...), never the classes
    classes = answers & _lines("\n".join(build.reference_code(name)))
    for path in sorted((ROOT / "course").rglob("*.py")):
        leaked = classes & _lines(path.read_text())
        assert not leaked, f"answer lines of {name} appear in {path.relative_to(ROOT)}: {leaked}"


@pytest.mark.parametrize("name", BUILT)
def test_no_hidden_test_under_notebooks(name):
    hidden = _hidden_test_lines(name)
    for path in sorted((ROOT / "notebooks").rglob("*")):
        if path.suffix in (".ipynb", ".py"):
            text = _notebook_text(path) if path.suffix == ".ipynb" else path.read_text()
            assert not hidden & _lines(text), f"hidden test of {name} in {path.relative_to(ROOT)}"


def test_bundle_contents_and_reproducibility(tmp_path):
    upto = BUILT[0]
    first = write_bundle(tmp_path / "a", names=[upto])
    second = write_bundle(tmp_path / "b", names=[upto])
    assert first.read_bytes() == second.read_bytes()
    names = zipfile.ZipFile(first).namelist()
    assert "README.md" in names and "course/__init__.py" in names
    assert f"notebooks/{upto}.ipynb" in names
    assert not any(n.startswith(("solutions/", "autograder/")) for n in names)
    assert not any(n.startswith("notebooks/") and n.split("/")[-1][:2] > upto[:2]
                   and n.endswith(".ipynb") for n in names)
    everything = zipfile.ZipFile(write_bundle(tmp_path / "c"))
    text = "\n".join(everything.read(n).decode() for n in everything.namelist())
    for name in BUILT:
        assert not _hidden_test_lines(name) & _lines(text), f"a hidden test of {name} is in the bundle"
    for name in BUILT[:1]:
        in_week = zipfile.ZipFile(write_bundle(tmp_path / name, names=BUILT[:BUILT.index(name) + 1]))
        week_text = "\n".join(in_week.read(n).decode() for n in in_week.namelist())
        assert not _answer_lines(name) & _lines(week_text), f"answers of {name} in its own release"


def test_student_readme_says_how_to_hand_a_notebook_in(tmp_path):
    """The README in the bundle tells a student how to hand in, and what grader.check is."""
    bundle = zipfile.ZipFile(write_bundle(tmp_path, names=BUILT[:1]))
    readme = bundle.read("README.md").decode()
    hand_in = readme[readme.index("## Handing a notebook in"):]
    for words in ("File > Download > Download .ipynb", "Keep its file name", "LMS", "Gradescope"):
        assert words in hand_in, words
    assert "self-check" in readme and "hidden checks run too" in readme
    assert "colab-badge.svg" in readme


def _setup_source(name: str) -> str:
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    return next(c.source for c in nb.cells if "setup" in c.metadata.get("tags", []))


def test_setup_cell_fetches_the_bundle_on_colab(tmp_path):
    """Pretend to be Colab: the setup cell downloads the served bundle and uses it."""
    served = tmp_path / "served"
    write_bundle(served)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        name = BUILT[0]
        work = tmp_path / "content"
        work.mkdir()
        script = ("import sys, types, json\n"
                  "sys.modules['google.colab'] = types.ModuleType('google.colab')\n"
                  + _setup_source(name) +
                  "\nimport course\nprint('@@' + json.dumps({'course': course.__file__, "
                  "'tests': str(grader._path) if hasattr(grader, '_path') else ''}))\n")
        env = {"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(tmp_path),
               "COURSE_URL": f"http://127.0.0.1:{httpd.server_port}/{BUNDLE_NAME}"}
        out = subprocess.run([sys.executable, "-c", script], cwd=work, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(out.stdout.split("@@")[-1])
        assert result["course"].startswith(str(work / "transformer-course"))
        assert (work / "transformer-course" / "notebooks" / "tests" / name).is_dir()
        assert "Ready" in out.stdout
    finally:
        httpd.shutdown()


# ---- a release ships the student package only, and gives away only what it says

def _release(tmp_path: Path, capsys, upto: str) -> tuple[Path, str]:
    out = tmp_path / f"public-{upto}"
    assert cli.main(["release", str(out), "--upto", upto]) == 0
    return out, capsys.readouterr().out


def _written(out: Path) -> list[tuple[Path, str]]:
    """What a release wrote, as the release names it (the zip holds the same files)."""
    return [(p, p.relative_to(out).as_posix()) for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != BUNDLE_NAME]


def _warned(printed: str) -> set[tuple[str, str]]:
    """(notebook, answer) of every answer the release's warning names."""
    warning = printed.split("WARNING", 1)[1] if "WARNING" in printed else ""
    named = set()
    for line in warning.splitlines():
        m = re.match(r"^  (\d\d_\w+): (.+)$", line)
        if m:
            named |= {(m.group(1), answer) for answer in m.group(2).split(", ")}
    return named


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add((node.module or "").split(".")[0])
    return found


@pytest.mark.parametrize("upto", BUILT)
def test_a_release_gives_away_only_what_it_says(tmp_path, capsys, upto):
    """No released file holds an answer of a later notebook (nor of this week's) that the printed
    warning does not name: measured on the files the release wrote."""
    out, printed = _release(tmp_path, capsys, upto)
    open_ = [a for a in giveaway.answers() if a.notebook >= upto]
    held = giveaway.find(_written(out), open_)
    unnamed = sorted({(f.answer.notebook, f.answer.name, f.file, f.holder) for f in held
                      if (f.answer.notebook, f.answer.name) not in _warned(printed)})
    assert not unnamed, f"--upto {upto} gives away, unannounced: {unnamed}"
    assert sorted(n for n in zipfile.ZipFile(out / BUNDLE_NAME).namelist() if n != "README.md") == \
        sorted(name for _, name in _written(out) if name != "README.md")


@pytest.mark.parametrize("upto", BUILT)
def test_a_release_ships_the_student_package_only(tmp_path, capsys, upto):
    out, _ = _release(tmp_path, capsys, upto)
    shipped = sorted(p.name for p in (out / "course").glob("*.py"))
    assert "__main__.py" not in shipped                     # python -m course: the instructor's command
    assert ("tinydenoiser.py" in shipped) == (upto >= "08_causal"), "tinydenoiser ships from 08 on"
    assert "tinydenoiser_curve.py" in shipped               # what 07 plots
    for name in shipped:
        assert not _imports(out / "course" / name) & {"instructor", "autograder"}, name
    if upto < "08_causal":                                  # the package works without tinydenoiser
        result = subprocess.run([sys.executable, "-c", "from course import *; import course.training, "
                                 "course.handles, course.nbgrader_check; print(TinyDenoiserCurve(50)[0])"],
                                cwd=out, capture_output=True, text=True, timeout=300,
                                env={"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(tmp_path)})
        assert result.returncode == 0 and "[25, 50]" in result.stdout, result.stderr[-2000:]


def test_the_student_package_holds_answers_only_in_tinydenoiser():
    """What the finder sees in course/: DenoiserBlock is 06's Block, TinyDenoiser 07's MyTransformer
    without the position table, and they pass on 08's causal; AllHeads holds 08's mask."""
    package = [(p, p.relative_to(ROOT).as_posix()) for p in shipped.package_files()]
    found = {(f.answer.notebook, f.answer.name, f.file, f.holder)
             for f in giveaway.find(package, giveaway.answers())}
    den = "course/tinydenoiser.py"
    assert {("06_block", "Block", den, "DenoiserBlock"),
            ("07_my_transformer", "MyTransformer", den, "TinyDenoiser"),
            ("08_causal", "Attention", den, "AllHeads"), ("08_causal", "Block", den, "DenoiserBlock"),
            ("08_causal", "MyTransformer", den, "TinyDenoiser")} <= found
    assert {f for f in found if f[2] != den} == set()
    assert "tinydenoiser" not in (ROOT / "course" / "tinydenoiser_curve.py").read_text().split('"""', 2)[2]


def test_the_finder_reads_answers_as_code_not_as_text():
    block = giveaway.answers(["06_block"])
    assert [a.name for a in block if a.name == "Block"] == ["Block"]
    renamed = """
class Renamed(nn.Module):
    def __init__(self, width, n):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)      # before talking
        self.attention = Whatever(width, n)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, h):
        h = h + self.attention(self.norm1(h))
        return h + self.mlp(self.norm2(h))
"""
    (node,) = [n for name, n in giveaway.definitions(renamed) if name == "Renamed"]
    answer = next(a for a in block if a.name == "Block")
    assert giveaway.holds(answer, node) >= 0.5
    stub = ("class Block(nn.Module):\n    def __init__(self, dim, heads):\n        super().__init__()\n"
            "        ...\n")
    (node,) = [n for name, n in giveaway.definitions(stub) if name == "Block"]
    assert giveaway.holds(answer, node) == 0                 # a prompt gives nothing away
