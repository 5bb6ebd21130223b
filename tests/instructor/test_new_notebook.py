"""Adding a notebook is `course new` and `course build`: a toy eleventh notebook, added by the steps
CONTRIBUTING.md gives to a copy of this repository, is taken by `course build`, `course release`,
`course grade`, the Gradescope zip and `course nbgrader` (the solution earns every automatic point on
each route, the blank none), and nothing else needs an edit."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from instructor import new, registry

ROOT = Path(__file__).resolve().parents[2]
TOY = "11_toy"


def _copy_of_the_repository(target: Path) -> Path:
    """This checkout's files (committed, and new ones git does not ignore), without build outputs."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            dst = target / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
            dst.chmod(src.stat().st_mode & 0o777)
    return target


def _course(repo: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "course", *args], cwd=repo, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"course {' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.e2e
def test_a_toy_eleventh_notebook_is_taken_by_every_command(tmp_path):
    repo = _copy_of_the_repository(tmp_path / "repo")
    before = registry.notebooks(repo / "course.toml")

    _course(repo, "new", TOY, "Adding up")                                   # step 1
    assert registry.notebooks(repo / "course.toml") == before + [TOY]
    built = _course(repo, "build", TOY)                                     # step 2
    assert f"building {TOY}" in built.stdout
    for path in (f"notebooks/{TOY}.ipynb", f"notebooks/tests/{TOY}/q1.py",
                 f"autograder/assignments/{TOY}/tests/q1.py", f"autograder/assignments/{TOY}/assignment.json",
                 f"nbgrader/source/{TOY}/{TOY}.ipynb", f"autograder/build/{TOY}-autograder.zip",
                 f"autograder/build/{TOY}-gradescope.md"):
        assert (repo / path).is_file(), f"course build did not write {path}"
    again = _course(repo, "build", TOY).stdout                               # a second build: nothing to do
    assert "built 0 of 1 notebook(s)" in again and "0 file(s) changed" in again, again

    _course(repo, "release", str(tmp_path / "public"), "--upto", TOY)
    assert (tmp_path / "public" / "notebooks" / f"{TOY}.ipynb").is_file()
    assert (tmp_path / "public" / "notebooks" / "tests" / TOY / "q1.py").is_file()

    script = ("import json, sys\nfrom pathlib import Path\nfrom tests.support.routes import grade_on_routes\n"
              f"print(json.dumps(grade_on_routes({TOY!r}, {{}}, Path(sys.argv[1]))))")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "routes")], cwd=repo,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    points = json.loads(done.stdout.strip().splitlines()[-1])
    for route in ("course grade", "gradescope", "nbgrader"):
        assert points[route]["solution"] == {"q1": 3.0}, (route, points[route])
        assert points[route]["blank"] == {"q1": 0.0}, (route, points[route])


@pytest.mark.unit
def test_the_name_goes_into_the_list_in_number_order_and_comments_stay():
    text = '# the list\n[course]\nnotebooks = [\n    "01_a",  # first\n    "03_c",\n]\n\n[publish]\nx = "y"\n'
    added = new.listed(text, "02_b")
    assert added == text.replace('    "03_c",', '    "02_b",\n    "03_c",')
    assert new.listed(text, "04_d").endswith('    "03_c",\n    "04_d",\n]\n\n[publish]\nx = "y"\n')


@pytest.mark.unit
@pytest.mark.parametrize("name, title, said", [
    ("10-toy", "T", "not named NN_name"),
    ("03_again", "T", "number 03 is taken by 03_attention"),
    ("11_toy", "  ", "the title is empty"),
])
def test_a_notebook_that_cannot_be_added_writes_nothing(tmp_path, name, title, said):
    repo = tmp_path / "repo"
    (repo / "solutions").mkdir(parents=True)
    (repo / "course.toml").write_bytes((ROOT / "course.toml").read_bytes())
    with pytest.raises(new.NewError, match=said):
        new.new(name, title, repo)
    assert (repo / "course.toml").read_bytes() == (ROOT / "course.toml").read_bytes()
    assert sorted(p.name for p in repo.rglob("*")) == ["course.toml", "solutions"]


@pytest.mark.unit
def test_a_new_notebook_is_its_master_its_material_and_its_line_in_course_toml(tmp_path):
    repo = tmp_path / "repo"
    (repo / "solutions").mkdir(parents=True)
    (repo / "course.toml").write_bytes((ROOT / "course.toml").read_bytes())
    new.new(TOY, "Adding up", repo)
    assert registry.notebooks(repo / "course.toml")[-1] == TOY
    master = (repo / "solutions" / f"{TOY}.ipynb").read_text()
    assert "name: 11_toy" in master and "# 11 · Adding up" in master and "NN" not in master
    material = repo / "autograder" / "assignments" / TOY
    assert sorted(p.relative_to(material).as_posix() for p in material.rglob("*") if p.is_file()) == [
        "degenerate.py", "mutants/sums_columns.py", "rules.toml"]
    assert "NN_name" not in (material / "degenerate.py").read_text()
    with pytest.raises(new.NewError, match="already exists|taken"):
        new.new(TOY, "Again", repo)
