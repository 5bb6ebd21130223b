"""Mutants: deliberately wrong answers (and alternative right ones) that keep the tests honest.

A mutant file autograder/assignments/NN_name/mutants/<name>.py starts with a header, then code:

    # question: q3
    # expect: fail                (or: pass)
    # replaces: Attention         (the top-level def/class whose solution cell this code replaces)
    # why: scales by sqrt of the model dimension instead of the head dimension
    # hint: sqrt(head_dim)        (optional, for a fail: what the student must be told: a failed
                                   case of its question shows these words)
    # says: scales by ...         (optional, for a fail: names the mistake to a student whose piece
                                   behaves like it; autograder.mistakes)
    # fails: test_a, test_b       (optional, for a fail: the only tests it may fail, so that one
                                   slip costs its points once)

`mutant_notebook` makes the submission: the filled-in solution notebook with that one cell
swapped. `python -m autograder.mutants NN_name [MUTANT...]` grades the solution and the mutants
through the real grader (`course grade`) and says, for each, whether it scored as expected, and
which tests it failed; with `--gradescope` it grades them through Otter's autograder zip the way
Gradescope runs it instead (slower: a Jupyter kernel per notebook). The mutation suite
(tests/autograder/test_mutations.py) does the same for every notebook.
"""
from __future__ import annotations

import ast
import csv
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import nbformat

from .assignment import ASSIGNMENTS
from .mistakes import Mutant, read_mutant
from .status import Status, kind_of

T = TypeVar("T")
HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"


def load_mutants(notebook: str) -> list[Mutant]:
    return [read_mutant(p) for p in sorted((ASSIGNMENTS / notebook / "mutants").glob("*.py"))]


def defines(source: str) -> set[str]:
    """Top-level names a cell defines with def/class (cells with magics or bad syntax define none)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def solution_notebook(notebook: str) -> nbformat.NotebookNode:
    path = BUILD / f"{notebook}-solution.ipynb"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `course build {notebook}` first")
    return nbformat.read(path, as_version=4)


def swap_last(notebook: str, holds: Callable[[str], bool], code: str, missing: str) -> nbformat.NotebookNode:
    """The solution notebook with the last code cell whose source ``holds`` swapped for ``code``
    (the last definition is the one the tests see); ValueError ``missing`` when there is none."""
    nb = solution_notebook(notebook)
    cells = [c for c in nb.cells if c.cell_type == "code" and holds(c.source)]
    if not cells:
        raise ValueError(missing)
    cells[-1].source = code
    return nb


def mutant_notebook(mutant: Mutant) -> nbformat.NotebookNode:
    """The solution notebook with the cell that defines `mutant.replaces` swapped for the mutant."""
    return swap_last(mutant.notebook, lambda source: mutant.replaces in defines(source), mutant.code,
                     f"{mutant.notebook}/{mutant.name}: no cell defines {mutant.replaces}")


def write_notebooks(out: Path, answers: dict[str, T], notebook_of: Callable[[T], nbformat.NotebookNode]
                    ) -> dict[str, T]:
    """``out/<stem>.ipynb`` for every answer of ``answers`` ({file stem: answer}); returns it."""
    out.mkdir(parents=True, exist_ok=True)
    for stem, answer in answers.items():
        nbformat.write(notebook_of(answer), out / f"{stem}.ipynb")
    return answers


def submissions(notebook: str) -> dict[str, Mutant]:
    """{file stem: mutant} of one notebook."""
    return {f"{notebook}__{m.expect}__{m.name}": m for m in load_mutants(notebook)}


def write_submissions(notebook: str, out: Path) -> dict[str, Mutant]:
    """Write one submission per mutant into `out`; {file stem: mutant}."""
    return write_notebooks(out, submissions(notebook), mutant_notebook)


# ---- grading the mutants through the real grader ---------------------------------------------------
def grade_folder(notebook: str, submissions: Path, out: Path, workers: int = 2) -> dict[str, dict]:
    """`course grade`'s engine on a folder of submissions; the grades.csv rows by file stem."""
    from .api import grade
    from .config import GradeConfig

    grade(GradeConfig(submissions=(submissions,), assignment=notebook, out=out, workers=workers,
                      progress=False))
    with open(out / "grades.csv", newline="") as f:
        return {Path(row["file"]).stem: row for row in csv.DictReader(f)}


def case_verdicts(results: Path, stem: str) -> list[tuple[str, bool]]:
    """(question:name, passed) of every test case of a graded submission (from its results file)."""
    path = results / f"{stem}.json"
    if not path.exists():
        return []
    return [(f"{c['question']}:{c['name']}", bool(c["passed"]))
            for c in json.loads(path.read_text()).get("tests", [])]


def failed_tests(results: Path, stem: str) -> list[str]:
    """The test cases a graded submission failed (question:name)."""
    return [name for name, passed in case_verdicts(results, stem) if not passed]


def told(results: Path, stem: str, question: str) -> list[str]:
    """What a graded submission was shown for the cases of `question` it failed."""
    path = results / f"{stem}.json"
    tests = json.loads(path.read_text()).get("tests", []) if path.exists() else []
    return [c.get("message", "") for c in tests if c["question"] == question and not c["passed"]]


def lost_questions(notebook: str, row: dict) -> list[str]:
    """The auto-graded questions in which a grades.csv row has less than full marks."""
    info = json.loads((ASSIGNMENTS / notebook / "assignment.json").read_text())
    return sorted(q["name"] for q in info["questions"]
                  if not q["manual"] and float(row[q["name"]] or 0) < float(q["points"]) - 1e-9)


def verdict(mutant: Mutant | None, lost: list[str], shown: Sequence[str] = ()) -> tuple[bool, str]:
    """Did the grading come out as the mutant (None: the solution) expects? (ok, explanation);
    `shown`: what the failed cases of its question said (checked against the mutant's hint)."""
    if mutant is None or mutant.expect == "pass":
        return (not lost, "full marks" if not lost else f"lost points in {lost}")
    if lost != [mutant.question]:
        return False, f"lost points in {lost or 'nothing'}, expected {mutant.question} only"
    if mutant.hint and not any(mutant.hint in text for text in shown):
        return False, f"lost points in {mutant.question} only, but no failed case says {mutant.hint!r}"
    return True, f"lost points in {mutant.question} only"


def grade_gradescope(notebook: str, submissions: Path, scratch: Path) -> dict[str, dict]:
    """Each submission through Otter's autograder zip, Gradescope-style: rows like grades.csv's."""
    from concurrent.futures import ThreadPoolExecutor

    from .gradescope import grade, question_points

    zip_path = BUILD / f"{notebook}-autograder.zip"

    def one(path: Path) -> tuple[str, dict]:
        points = question_points(grade(zip_path, path, scratch / path.stem))
        return path.stem, {**{q: str(p) for q, p in points.items()}, "grading_status": "ok"}

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, sorted(submissions.glob("*.ipynb"))))


def main(argv: list[str] | None = None) -> int:
    import tempfile

    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__)
        return 2
    gradescope = "--gradescope" in argv
    argv = [a for a in argv if a != "--gradescope"]
    notebook, wanted = argv[0], set(argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "submissions"
        written = write_notebooks(subs, {s: m for s, m in submissions(notebook).items()
                                         if not wanted or m.name in wanted}, mutant_notebook)
        nbformat.write(solution_notebook(notebook), subs / f"{notebook}__solution.ipynb")
        if gradescope:
            rows = grade_gradescope(notebook, subs, Path(tmp) / "gradescope")
        else:
            rows = grade_folder(notebook, subs, Path(tmp) / "grades")
        results = Path(tmp) / "grades" / "results"
        failed = {stem: failed_tests(results, stem) for stem in rows}
        shown = {stem: told(results, stem, m.question) for stem, m in written.items()}
    bad = 0
    for stem, row in sorted(rows.items()):
        mutant = written.get(stem)
        ok, text = verdict(mutant, lost_questions(notebook, row), shown.get(stem, []))
        ok = ok and kind_of(row["grading_status"]) is Status.OK
        bad += not ok
        label = "solution" if mutant is None else f"{mutant.expect:4} {mutant.name}"
        print(f"{'ok ' if ok else 'BAD'} {label:40} {text} [{row['grading_status']}]")
        if failed[stem]:
            print(f"      failed: {', '.join(failed[stem])}")
    print(f"{len(rows) - bad}/{len(rows)} as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
