"""Where students' notebooks fetch the course from, and `course release OUT`, which makes that bundle.

The bundle (course-student.zip) holds the student notebooks, their public tests, the `course`
package and a student README: never the solutions, the hidden tests or the grader.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

# The one setting: the address the setup cell of every notebook downloads the bundle from on Colab.
# `course build` writes it into the notebooks; change it here and rebuild to move the course.
RELEASE_URL = ("https://github.com/transformer-from-scratch/course/releases/latest/download/"
               "course-student.zip")
BUNDLE_NAME = "course-student.zip"

ROOT = Path(__file__).resolve().parent.parent

STUDENT_README = """\
# Transformer from Scratch: student bundle

Open the notebooks in `notebooks/` in order, in Jupyter or on Google Colab, and run the first
cell of each (it sets everything up). After each exercise, `grader.check("qN")` runs the public
checks for it. Your instructor grades your work with more checks than these, so passing the public
checks means your shapes and basic behaviour are right, not that everything is.

On your own computer you need Python 3.10 or newer and

    pip install torch numpy matplotlib requests tqdm jupyter otter-grader==7.0.0

Run Jupyter from this folder (`jupyter notebook notebooks/`), so that the notebooks find `course/`.

The stories (notebooks 07 and 08) are a 4 MB piece of TinyStories. They are not in this bundle: the
notebooks download them the first time they are used and keep them in `data_cache/` (next to
`course/`), so you need the internet once. Without it, get the file elsewhere (the first 4,000,000
bytes of
https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main/TinyStoriesV2-GPT4-valid.txt
are enough) and put it into the cache with `python -m course data --from FILE`, run in this folder;
or point the environment variable COURSE_STORIES_FILE at it. Trained stories models are saved in
`data_cache/` too, so a second run of a notebook reuses them instead of training again.
"""


def _released(path: Path, upto: str | None) -> bool:
    """Is this notebook (or its tests folder) part of a release up to notebook `upto`?"""
    name = path.stem if path.suffix == ".ipynb" else path.parent.name
    return upto is None or name[:2] <= upto[:2]


def bundle_files(root: Path = ROOT, upto: str | None = None) -> list[tuple[Path, str]]:
    """(file on disk, name in the bundle) for everything that goes to students, sorted.

    With `upto` (e.g. "03_attention") only the notebooks up to that one are included: each
    notebook gives the earlier ones' answers as GIVEN code, so release them one week at a time.
    """
    files = []
    for path in sorted((root / "course").rglob("*.py")):
        files.append((path, path.relative_to(root).as_posix()))
    for path in sorted((root / "notebooks").rglob("*")):
        if path.is_file() and path.suffix in (".ipynb", ".py") and "__pycache__" not in path.parts \
                and ".ipynb_checkpoints" not in path.parts and _released(path, upto):
            files.append((path, path.relative_to(root).as_posix()))
    return files


def write_bundle(out_dir: Path, root: Path = ROOT, upto: str | None = None) -> Path:
    """Write out_dir/course-student.zip; the same inputs give the same bytes (fixed dates, sorted)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / BUNDLE_NAME
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        entries = [(None, "README.md")] + bundle_files(root, upto)
        for path, name in entries:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            data = STUDENT_README.encode() if path is None else path.read_bytes()
            bundle.writestr(info, data)
    return target
