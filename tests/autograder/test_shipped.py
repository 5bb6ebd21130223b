"""What week NN ships (autograder/shipped.py), the one answer the release, the Gradescope zip, the
nbgrader course and the grader's sandbox use; and the submission's process seeing exactly that
package (autograder/runner.py, use_package), whatever the fork server imported."""
import subprocess
import sys
from pathlib import Path

from autograder import shipped

REPO = Path(__file__).resolve().parents[2]


def _names(upto):
    return {p.relative_to(shipped.COURSE).as_posix() for p in shipped.package_files(upto)}


def test_the_course_answers_of_later_weeks_ship_with_their_notebook():
    for week in ("01_no_talking", "06_block", "07_my_transformer"):
        assert "tinydenoiser.py" not in _names(week), week
    for week in ("08_causal", "09_gpt", None):
        assert "tinydenoiser.py" in _names(week), week
    every = _names(None)
    assert "__main__.py" not in every                      # the instructor's command
    assert {"__init__.py", "rules/__init__.py", "rules/checker.py", "handles.py",
            "tinydenoiser_curve.py"} <= every
    assert _names("07_my_transformer") == every - {"tinydenoiser.py"}
    assert "course.rules.reading" in shipped.module_names("06_block")
    assert "course.tinydenoiser" not in shipped.module_names("06_block")


def test_the_copy_holds_that_package_only_and_nobody_else_may_write_it(tmp_path):
    folder = shipped.write_package("06_block", tmp_path / "package")
    copied = {p.relative_to(folder / "course").as_posix() for p in (folder / "course").rglob("*.py")}
    assert copied == _names("06_block")
    for p in [folder, *(folder / "course").rglob("*")]:
        assert p.stat().st_mode & 0o022 == 0, p


def test_the_submissions_process_imports_the_weeks_package_only(tmp_path):
    """As in the fork server: the course (with TinyDenoiser) imported from this repository first; then
    the week's package is put in place: a module of it the week does not ship is gone, and cannot be
    imported again; the others come from the copy."""
    folder = shipped.write_package("06_block", tmp_path / "package")
    code = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
import course, course.tinydenoiser, course.rules
from autograder.runner import use_package
use_package({str(folder)!r})
assert "course.tinydenoiser" not in sys.modules and not hasattr(course, "tinydenoiser")
try:
    import course.tinydenoiser
    print("imported")
except ImportError:
    print("refused")
import course.data
print(course.data.__file__.startswith({str(folder)!r}), course.__path__ == [{str(folder / 'course')!r}],
      course.rules.__path__ == [{str(folder / 'course' / 'rules')!r}])
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["refused", "True", "True", "True"], done.stdout
