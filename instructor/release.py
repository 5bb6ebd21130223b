"""`course release OUT`: what the public place needs, and nothing of the private repository.

OUT becomes the tree of the public repository that students open the notebooks from
(course.toml's `repository`):

    OUT/README.md              the student README, with an "Open in Colab" badge per notebook
    OUT/course-student.zip     the bundle the setup cell downloads on Colab (course.toml's address)
    OUT/notebooks/NN_name.ipynb, OUT/notebooks/tests/NN_name/   student notebooks, public tests
    OUT/course/                the student package (so a clone of the public repository runs too)

Never the solutions, the hidden tests, the grader or the instructor's tooling: of `course/` it ships
the student package as the last released week ships it (:mod:`autograder.shipped`, which the
Gradescope zip, the nbgrader course and the grader's sandbox use too): not `__main__.py`, the
instructor's `python -m course`, and a module that holds answers (`tinydenoiser.py`) only from the
notebook that reads its code.
Each notebook's GIVEN cells hold the reference answers of the earlier notebooks, so a release names
the last notebook students get (`upto`); :func:`given_away` finds, in what a release ships, every
answer it gives away (:mod:`instructor.giveaway`), and `course release` prints them.
"""
from __future__ import annotations

import shutil
import zipfile
from pathlib import Path
from typing import cast

from autograder import shipped

from . import giveaway, publish, registry
from .publish import BUNDLE_NAME

ROOT = Path(__file__).resolve().parent.parent
# What a release owns in OUT: written anew each time (anything else there, .git included, is kept).
OWNED = ("README.md", BUNDLE_NAME, "course", "notebooks")

STUDENT_README = """\
# Transformer from Scratch: the student notebooks

Open the notebooks in order, on Google Colab (the badges below) or in Jupyter, and run the first
cell of each: it sets everything up (on Colab it downloads the course and installs the grader, about
30 s the first time). If it fails it says why in one sentence, and "Run all" stops there: do what it
says and run it again (the later cells need it).

{badges}

## Checking your work

After each exercise, `grader.check("qN")` runs the public checks for it. They are only a self-check:
when your notebook is graded, hidden checks run too, so passing the public checks means your shapes
and basic behaviour are right, not that everything is. Plots and explanations are read by your
instructor.

## Handing a notebook in

1. Run it, then save it with its outputs (long training cells are not run again when it is graded:
   your plots are what you saved). On Colab: File > Download > Download .ipynb. In Jupyter: File >
   Save, then take the file from `notebooks/`.
2. Keep its file name, such as `03_attention.ipynb`.
3. Upload that one file where your instructor says: the assignment in your course's LMS (Canvas,
   Moodle, ...) or on Gradescope. Not a zip, and not another week's notebook.

## On your own computer

You need Python 3.10 or newer and

```sh
pip install torch numpy matplotlib requests tqdm jupyter otter-grader==7.0.0
```

Run Jupyter from this folder (`jupyter notebook notebooks/`), so that the notebooks find `course/`.

The stories (notebooks 07, 08 and 09) are a 4 MB piece of TinyStories. They are not in this bundle:
the notebooks download them the first time they are used and keep them in `data_cache/` (next to
`course/`), so you need the internet once. Without it, get the file elsewhere (the first 4,000,000
bytes of
https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main/TinyStoriesV2-GPT4-valid.txt
are enough) and put it into the cache with `python -m course.data --from FILE`, run in this folder;
or point the environment variable COURSE_STORIES_FILE at it. Trained stories models are saved in
`data_cache/` too, so a second run of a notebook reuses them instead of training again.
"""


class ReleaseError(ValueError):
    """A release that would go wrong: an unknown notebook, or OUT is the private repository."""


def built_names(root: Path = ROOT) -> list[str]:
    """The course's notebooks (course.toml's list, :mod:`instructor.registry`) whose student notebook
    is built, in course order."""
    return [n for n in registry.notebooks(root / "course.toml")
            if (root / "notebooks" / f"{n}.ipynb").is_file()]


def released_names(upto: str | None, everything: bool = False, root: Path = ROOT) -> list[str]:
    """The notebooks of a release up to and including `upto` (an exact NN_name), or all of them;
    each must be built."""
    names = registry.notebooks(root / "course.toml")
    if not everything and upto not in names:
        raise ReleaseError(f"--upto must name a notebook exactly, not {upto!r}; one of: "
                           + ", ".join(names))
    chosen = names if everything else names[:names.index(cast(str, upto)) + 1]     # upto is in names
    unbuilt = [n for n in chosen if not (root / "notebooks" / f"{n}.ipynb").is_file()]
    if unbuilt:
        raise ReleaseError(f"{', '.join(unbuilt)} not built yet (notebooks/NN_name.ipynb is missing): "
                           "run `course build` first")
    return chosen


def given_away(names: list[str], root: Path = ROOT) -> list[giveaway.Found]:
    """Every answer, of any notebook, that a release of the notebooks ``names`` gives away: found in
    the files it ships (its notebooks' GIVEN cells and text, their public tests, the student package)."""
    return giveaway.find(bundle_files(root, names), giveaway.answers())


def given_away_lines(found: list[giveaway.Found], names: list[str], everything: bool = False) -> list[str]:
    """What `course release` prints about ``found``: the answers of the notebooks students have done
    (every one before the last released, when a release names it), then, as a warning, those of the
    notebooks they have not (the last released and later; with ``everything``, all)."""
    done = set() if everything else set(names[:-1])
    earlier = [f for f in found if f.answer.notebook in done]
    later = [f for f in found if f.answer.notebook not in done]
    lines = []
    if earlier:
        lines.append(f"This release gives away the answers of {_count(earlier)} earlier notebook(s), which "
                     "students have done:")
        lines += _grouped(earlier)
    if later:
        label = "WARNING: releasing every notebook gives away" if everything else \
            "WARNING: this release gives away"
        lines.append(f"{label} the answers of {_count(later)} notebook(s) students have not done yet:")
        lines += _grouped(later)
    return lines


def _count(found: list[giveaway.Found]) -> int:
    return len({f.answer.notebook for f in found})


def _grouped(found: list[giveaway.Found]) -> list[str]:
    """Per notebook: its answers given away, then where (a file whose definitions have other names
    than the answers they hold says which holds which)."""
    lines = []
    for notebook in sorted({f.answer.notebook for f in found}):
        mine = [f for f in found if f.answer.notebook == notebook]
        lines.append(f"  {notebook}: {', '.join(dict.fromkeys(f.answer.name for f in mine))}")
        plain, named = [], []
        for file in dict.fromkeys(f.file for f in mine):
            here = [f for f in mine if f.file == file]
            other = [f"{f.holder} holds {f.answer.name}" for f in here
                     if f.holder.rpartition(".")[2] != f.answer.name]
            if other:
                named.append(f"      in {file} ({', '.join(other)})")
            else:
                plain.append(file)
        if plain:
            lines.append(f"      in {', '.join(plain)}")
        lines += named
    return lines


def student_readme(names: list[str], settings: publish.Publish) -> str:
    return STUDENT_README.format(badges=publish.badge_table(settings, names))


def bundle_files(root: Path = ROOT, names: list[str] | None = None) -> list[tuple[Path, str]]:
    """(file on disk, name in the release) for everything that goes to students, sorted: the student
    package, and the student notebooks `names` (default: all) with their public tests."""
    names = built_names(root) if names is None else names
    package = shipped.package_files(names[-1] if names else None, root / "course")
    files = [(path, path.relative_to(root).as_posix()) for path in package]
    for name in names:
        files.append((root / "notebooks" / f"{name}.ipynb", f"notebooks/{name}.ipynb"))
        tests = root / "notebooks" / "tests" / name
        files += [(path, path.relative_to(root).as_posix()) for path in sorted(tests.rglob("*.py"))
                  if "__pycache__" not in path.parts]
    return files


def write_bundle(out_dir: Path, root: Path = ROOT, names: list[str] | None = None,
                 readme: str | None = None) -> Path:
    """Write out_dir/course-student.zip; the same inputs give the same bytes (fixed dates, sorted)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    names = built_names(root) if names is None else names
    readme = student_readme(names, publish.load()) if readme is None else readme
    target = out_dir / BUNDLE_NAME
    part = target.with_suffix(".zip.part")
    with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for path, name in [(None, "README.md")] + bundle_files(root, names):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            bundle.writestr(info, readme.encode() if path is None else path.read_bytes())
    part.replace(target)
    return target


def _check_out(out: Path, root: Path) -> None:
    out, root = out.resolve(), root.resolve()
    if out == root or any((out / private).exists() for private in ("solutions", "autograder")):
        raise ReleaseError(f"{out} looks like the private repository (it has solutions/ or "
                           "autograder/): write the release into a clone of the public one")


def write_release(out: Path, names: list[str], root: Path = ROOT,
                  settings: publish.Publish | None = None) -> list[Path]:
    """Write the public repository's tree for notebooks `names` into `out`; returns what it wrote.
    What a release owns there (OWNED) is replaced; everything else (.git, a licence) is kept."""
    _check_out(out, root)
    settings = settings or publish.load()
    out.mkdir(parents=True, exist_ok=True)
    for owned in OWNED:
        path = out / owned
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    readme = student_readme(names, settings)
    written = [out / "README.md", write_bundle(out, root, names, readme)]
    (out / "README.md").write_text(readme)
    for path, name in bundle_files(root, names):
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        written.append(target)
    return written
