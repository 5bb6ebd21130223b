"""OUT's pointer (autograder/outdir.py): each grading published whole by one rename of `.current`,
OUT's documented names links through it; and a copy of OUT made by a copier that follows links
(its pointers real folders) is published into again as it reads."""
import shutil
from pathlib import Path

from autograder import outdir


def _grading(out: Path, text: str) -> None:
    staging = outdir.begin(out)
    (staging / "grades.csv").write_text(text)
    (staging / "results").mkdir()
    (staging / "results" / "a.json").write_text(text)
    outdir.publish(staging, out)


def _read(out: Path) -> tuple[str, str]:
    return (out / "grades.csv").read_text(), (out / "results" / "a.json").read_text()


def test_each_grading_is_read_whole_through_the_pointer(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    _grading(out, "one")
    _grading(out, "two")
    assert _read(out) == ("two", "two")
    assert (out / "grades.csv").is_symlink() and (out / outdir.CURRENT).is_symlink()
    assert outdir.resolve(out).joinpath("grades.csv").read_text() == "two"


def test_a_copy_that_followed_the_links_is_graded_into_again(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    _grading(out, "one")
    _grading(out, "two")
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)                   # follows links: .current and the names are real
    assert not (copy / outdir.CURRENT).is_symlink() and not (copy / "grades.csv").is_symlink()
    assert _read(copy) == ("two", "two")
    _grading(copy, "three")
    assert _read(copy) == ("three", "three")
    assert (copy / outdir.CURRENT).is_symlink() and (copy / "grades.csv").is_symlink()
    assert _read(out) == ("two", "two")          # the original is untouched
