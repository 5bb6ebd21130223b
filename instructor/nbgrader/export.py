"""The course as an nbgrader course directory (nbgrader/), built from the same masters.

    nbgrader/nbgrader_config.py           the course's nbgrader settings (run nbgrader from nbgrader/)
    nbgrader/nbgrader_plugins.py          what the config plugs into nbgrader: instructor/nbgrader/plugins.py,
                                          written by the build (not committed: it is that file)
    nbgrader/source/NN_name/NN_name.ipynb the master as an nbgrader source notebook (:mod:`.source`)
    nbgrader/source/NN_name/course/       the student package, released to students with the notebook
                                          (as `course release --upto NN_name` ships it; not committed)

`course build` calls :func:`build_nbgrader`; `python -m instructor.nbgrader.export [--check] [NN_name...]`
does the same on its own.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from autograder import shipped

from ..masters import NAMES, ROOT
from .source import TEXT_STUB, source_notebook

NBGRADER = ROOT / "nbgrader"
SOURCE = NBGRADER / "source"
PLUGINS = Path(__file__).with_name("plugins.py")
COURSE_ID = "transformer-from-scratch"
WRITTEN_ONLY = ("nbgrader_plugins.py",)       # copies of the repository's own files: not committed twice


CONFIG = '''\
"""nbgrader settings of the course "Transformer from Scratch" (written by `course build`).

Run nbgrader from this folder (the course directory): source/NN_name/ holds each notebook and the
course package released with it. See docs/platforms.md, "JupyterHub and nbgrader".
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, DeduplicateIds, GetGrades, IgnorePattern,
    LimitOutput, OverwriteKernelspec, SaveAutoGrades,
)
from nbgrader_plugins import (  # noqa: E402
    KeepSkippedOutputs, KeepStudentOutputs, OverwriteReleasedCells, QuestionCsvExport, RunNothing,
    SkipUngraded,
)

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "{course_id}"

# Answers: the student sees the prompt of each answer cell; the solution region leaves nothing behind.
c.ClearSolutions.code_stub = {{"python": ""}}
c.ClearSolutions.text_stub = "{text_stub}"

# Autograde runs none of the student's code (RunNothing): in nbgrader's kernel it would run
# unsandboxed, in your account, in this folder. The scores of record come from `course nbgrader
# NN_name` (the course's engine, each notebook sandboxed), which runs this autograde first, for
# nbgrader's records, and then writes the judge's points into the gradebook. Locked cells are
# compared with the text students got (hidden tests removed): only an edited one is reported.
# COURSE_NBGRADER_KERNEL=1 runs the tests in the student's kernel as stock nbgrader does (the
# cells marked -skipped, long training, are not run; at most {timeout} s per cell): only for
# comparing with nbgrader's own autograde, never for grades.
c.Execute.timeout = {timeout}
IN_KERNEL = os.environ.get("COURSE_NBGRADER_KERNEL") == "1"
EXECUTE, OUTPUTS = (SkipUngraded, KeepSkippedOutputs) if IN_KERNEL else (RunNothing, KeepStudentOutputs)
c.Autograde.sanitize_preprocessors = [
    OUTPUTS, DeduplicateIds, OverwriteKernelspec, OverwriteReleasedCells, CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    EXECUTE, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata,
]

# Feedback shows a hidden test only as its result and hint (autograde put its code back in the notebook).
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]

# `nbgrader export`: nbgrader's columns, then the points of each question (q1, q2, ...).
c.ExportApp.plugin_class = QuestionCsvExport
'''

GITIGNORE = """\
# copies written by `course build` (not committed: they are course/ itself, next to each notebook,
# and instructor/nbgrader/plugins.py)
source/*/course/
nbgrader_plugins.py
# what nbgrader writes when it runs in this folder
gradebook.db
release/
submitted/
autograded/
feedback/
exchange/
*.log
"""


def course_files(names: list[str]) -> dict[str, bytes]:
    """{path under nbgrader/: bytes} of the whole course directory for the given masters."""
    import nbformat

    files: dict[str, bytes] = {
        "nbgrader_config.py": CONFIG.format(course_id=COURSE_ID, text_stub=TEXT_STUB, timeout=120).encode(),
        "nbgrader_plugins.py": PLUGINS.read_bytes(),
        ".gitignore": GITIGNORE.encode(),
    }
    for name in names:
        nb, _ = source_notebook(name)
        files[f"source/{name}/{name}.ipynb"] = (nbformat.writes(nb) + "\n").encode()
        for path in shipped.package_files(name):                          # as a release up to it
            files[f"source/{name}/course/{path.relative_to(ROOT / 'course').as_posix()}"] = path.read_bytes()
    return files


def build_nbgrader(names: list[str] | None = None, out: Path = NBGRADER) -> list[str]:
    """Write nbgrader/ from the masters (default: all that exist); returns the paths that changed,
    relative to the repository (or to `out`'s parent). Files of a built notebook that the build no
    longer makes are removed; notebooks not named are left alone."""
    from ..masters import masters

    names = names or masters()
    files = course_files(names)
    changed: list[str] = []
    base = out.parent

    def committed(rel: str) -> bool:          # the copies (course/, the plugins) are written, not committed
        in_course = rel.startswith("source/") and rel.split("/")[2:3] == ["course"]
        return rel not in WRITTEN_ONLY and not in_course

    for rel, data in sorted(files.items()):
        path = out / rel
        if not path.exists() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if committed(rel):
                changed.append(str(path.relative_to(base)))
    for name in names:
        folder = out / "source" / name
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(out).as_posix()
            if path.is_file() and rel not in files and "__pycache__" not in path.parts:
                path.unlink()
                if committed(rel):
                    changed.append(str(path.relative_to(base)))
    for folder in sorted((out / "source").glob("*")) if (out / "source").exists() else []:
        if folder.is_dir() and folder.name not in masters():
            shutil.rmtree(folder)
            changed.append(str(folder.relative_to(base)))
    return changed


def main(argv: list[str] | None = None) -> int:
    import argparse

    from ..masters import masters

    parser = argparse.ArgumentParser(prog="python -m instructor.nbgrader.export",
                                     description="Write nbgrader/ (nbgrader's course directory).")
    parser.add_argument("notebooks", nargs="*", help="NN_name of the masters (default: all)")
    parser.add_argument("--check", action="store_true", help="fail if nbgrader/ was out of date")
    args = parser.parse_args(argv)
    unknown = [n for n in args.notebooks if n not in NAMES]
    if unknown:
        parser.error(f"unknown notebook(s) {unknown}; choose from {NAMES}")
    changed = build_nbgrader(args.notebooks or None)
    for path in changed:
        print(f"updated {path}")
    print(f"nbgrader: {len(args.notebooks or masters())} notebook(s); {len(changed)} file(s) changed")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
