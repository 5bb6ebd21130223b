"""Mutants: deliberately wrong answers (and alternative right ones) that keep the tests honest.

A mutant file autograder/mutations/NN_name/<name>.py starts with a header, then code:

    # question: q3
    # expect: fail                (or: pass)
    # replaces: Attention         (the top-level def/class whose solution cell this code replaces)
    # why: scales by sqrt of the model dimension instead of the head dimension

`mutant_notebook` makes the submission: the filled-in solution notebook with that one cell
swapped. `python -m autograder.mutants NN_name [MUTANT...]` grades mutants quickly for authors
(each in its own process, the otter test files run in-process); the test suite grades them all
through `course grade` instead.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
MUTATIONS = HERE / "mutations"
BUILD = HERE / "build"


@dataclass(frozen=True)
class Mutant:
    notebook: str
    name: str
    question: str
    expect: str          # "fail" or "pass"
    replaces: str
    why: str
    code: str


def read_mutant(path: Path) -> Mutant:
    header, body = {}, []
    for line in path.read_text().splitlines():
        key = line[2:].split(":", 1)[0].strip() if line.startswith("# ") and ":" in line else None
        if not body and key in ("question", "expect", "replaces", "why"):
            header[key] = line.split(":", 1)[1].strip()
        else:
            body.append(line)
    missing = {"question", "expect", "replaces"} - header.keys()
    if missing or header["expect"] not in ("pass", "fail"):
        raise ValueError(f"{path}: the header needs question, expect (pass/fail) and replaces")
    return Mutant(path.parent.name, path.stem, header["question"], header["expect"],
                  header["replaces"], header.get("why", ""), "\n".join(body).strip() + "\n")


def load_mutants(notebook: str) -> list[Mutant]:
    return [read_mutant(p) for p in sorted((MUTATIONS / notebook).glob("*.py"))]


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


def mutant_notebook(mutant: Mutant) -> nbformat.NotebookNode:
    """The solution notebook with the cell that defines `mutant.replaces` swapped for the mutant."""
    nb = solution_notebook(mutant.notebook)
    cells = [c for c in nb.cells if c.cell_type == "code" and mutant.replaces in defines(c.source)]
    if not cells:
        raise ValueError(f"{mutant.notebook}/{mutant.name}: no cell defines {mutant.replaces}")
    cells[-1].source = mutant.code      # the last definition is the one the tests see
    return nb


def write_submissions(notebook: str, out: Path) -> dict[str, Mutant]:
    """Write one submission per mutant (plus the untouched solution) into `out`; {file stem: mutant}."""
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for mutant in load_mutants(notebook):
        stem = f"{notebook}__{mutant.expect}__{mutant.name}"
        nbformat.write(mutant_notebook(mutant), out / f"{stem}.ipynb")
        written[stem] = mutant
    return written


# ---- quick in-process grading for authors -------------------------------------------------------
_RUN_ONE = r'''
import json, sys, types, contextlib, io
import nbformat
from IPython.core.inputtransformer2 import TransformerManager
from otter.test_files.exception_test import ExceptionTestFile
nb_path, tests_dir = sys.argv[1], sys.argv[2]
otter = types.ModuleType("otter")
otter.Notebook = lambda *a, **k: types.SimpleNamespace(check=lambda *a, **k: None,
                                                     check_all=lambda *a, **k: None)
sys.modules["otter"] = otter
import matplotlib; matplotlib.use("Agg")
import torch; torch.manual_seed(0)
env = {"__name__": "__main__", "get_ipython": lambda: types.SimpleNamespace(
    system=lambda *a, **k: None, run_line_magic=lambda *a, **k: None, run_cell_magic=lambda *a, **k: None)}
errors = []
for cell in nbformat.read(nb_path, as_version=4).cells:
    if cell.cell_type != "code" or "otter_ignore" in cell.metadata.get("tags", []):
        continue
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(TransformerManager().transform_cell(cell.source), env)
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}")
scores = {}
from pathlib import Path
for path in sorted(Path(tests_dir).glob("*.py")):
    torch.manual_seed(0)
    tf = ExceptionTestFile.from_file(str(path))
    tf.run(env)
    scores[tf.name] = [tf.score, tf.possible,
                       [r.message.splitlines()[-1] for r in tf.test_case_results if not r.passed]]
print("@@RESULT@@" + json.dumps({"scores": scores, "errors": errors}))
'''


def grade_inprocess(nb_path: Path, notebook: str, timeout: float = 300) -> dict:
    tests = HERE / notebook / "tests"
    result = subprocess.run([sys.executable, "-c", _RUN_ONE, str(nb_path), str(tests)],
                            capture_output=True, text=True, timeout=timeout, cwd=nb_path.parent)
    for line in result.stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@"):])
    return {"scores": {}, "errors": [f"runner failed: {result.stderr[-2000:]}"]}


def verdict(mutant: Mutant | None, scores: dict) -> tuple[bool, str]:
    """Did the grading come out as the mutant expects? (ok, explanation)"""
    lost = sorted(q for q, (score, possible, _) in scores.items() if score < possible)
    if mutant is None or mutant.expect == "pass":
        return (not lost, "full marks" if not lost else f"lost points in {lost}")
    if lost == [mutant.question]:
        return True, f"lost points in {mutant.question} only"
    return False, f"lost points in {lost or 'nothing'}, expected {mutant.question} only"


def main(argv: list[str] | None = None) -> int:
    import tempfile

    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__)
        return 2
    notebook, wanted = argv[0], set(argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        subs = write_submissions(notebook, Path(tmp))
        solution = Path(tmp) / f"{notebook}__solution.ipynb"
        nbformat.write(solution_notebook(notebook), solution)
        jobs = [(None, solution)] + [(m, Path(tmp) / f"{stem}.ipynb") for stem, m in subs.items()
                                     if not wanted or m.name in wanted]
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda job: grade_inprocess(job[1], notebook), jobs))
    bad = 0
    for (mutant, _), result in zip(jobs, results, strict=False):
        ok, text = verdict(mutant, result["scores"])
        bad += not ok
        label = "solution" if mutant is None else f"{mutant.expect:4} {mutant.name}"
        print(f"{'ok ' if ok else 'BAD'} {label:40} {text}")
        if not ok or result["errors"]:
            for q, (score, possible, fails) in result["scores"].items():
                for fail in fails:
                    print(f"      {q} {score}/{possible}: {fail}")
            for error in result["errors"][:3]:
                print(f"      cell error: {error}")
    print(f"{len(jobs) - bad}/{len(jobs)} as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
