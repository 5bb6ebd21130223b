"""nbgrader against `course grade` on the same answers: points per question and time per notebook.

    .venv/bin/python benchmarks/nbgrader_grading.py [NN_name ...] [--mutants 3] [--keep DIR]

Builds a scratch copy of the nbgrader course directory (instructor/nbgrader/export.py), runs
`nbgrader generate_assignment` and `nbgrader validate` (on the released, blank notebook) for each
notebook, submits the solution, the blank and mutants (autograder/assignments/NN_name/mutants/:
`--mutants` wrong
answers spread over the questions and one alternative right answer) as nbgrader students,
runs `nbgrader autograde` once per notebook and `nbgrader export` once; then grades the same answers
in Otter's form with `course grade --workers 1` and `--workers 2`. It prints, per notebook and
submission, the points per question of both (and whether they agree), then the seconds per
submission of each grader. The last line is one JSON object. tests/instructor/test_nbgrader_grading.py runs
the same comparison (`grade_both`) as a test.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import nbformat  # noqa: E402

from benchmarks.nbgrader_class import filled_notebook, pick_mutants, read_export, submit  # noqa: E402
from benchmarks.nbgrader_class import mutant_notebook as nbgrader_mutant  # noqa: E402
from instructor.nbgrader.commands import nbgrader, nbgrader_env  # noqa: E402
from instructor.nbgrader.export import build_nbgrader  # noqa: E402
from instructor.nbgrader.source import source_notebook  # noqa: E402


def _edit_given(nb) -> tuple[str, str]:
    """Edit the last GIVEN code cell that autograde runs, in place: (its grade_id, its source)."""
    cell = [c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("locked")
            and not c.metadata["nbgrader"].get("grade")
            and not c.metadata["nbgrader"]["grade_id"].endswith("-skipped")][-1]
    original = cell.source
    cell.source = "raise RuntimeError('edited by the student')\n" + original
    return cell.metadata["nbgrader"]["grade_id"], original


SUBMITTED_OUTPUT = "output of the student's own run\n"


def with_outputs(nb):
    """A copy of `nb` whose cells autograde does not run hold an output, as a student's would."""
    import copy

    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type == "code" and grade_id.endswith("-skipped"):
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=SUBMITTED_OUTPUT)]
    return nb


def grade_both(names: list[str], scratch: Path, fail: int = 3, passing: int = 1, edited: str | None = None,
               feedback: tuple[str, ...] = (), groups: int = 1, timed: bool = False,
               workers: tuple[int, ...] = (2,)) -> dict:
    """The whole comparison in `scratch` (see the module's docstring).

    `fail`/`passing`: mutants per notebook; `edited`: a notebook that also gets the solution with a
    GIVEN cell edited (student "given-edited"); `feedback`: notebooks to run `nbgrader
    generate_feedback` on. The notebooks are split over `groups` course directories graded side by
    side; each runs `nbgrader generate_assignment "*"` and `nbgrader autograde "*"` once, or, with
    `timed`, one command per notebook (to time each). Returns every command's result (by notebook),
    nbgrader's and course grade's rows, and the times."""
    from concurrent.futures import ThreadPoolExecutor

    from autograder.mutants import grade_folder, mutant_notebook, solution_notebook
    from instructor.build import NOTEBOOKS

    data: dict = {"scratch": scratch, "roots": {}, "generate": {}, "validate": {}, "autograde": {},
                  "feedback": {}, "export": {}, "labels": {}, "seconds": {}, "edited": None,
                  "nbgrader_rows": {}}

    def submit_all(root: Path, name: str) -> None:
        released = nbformat.read(root / "release" / name / f"{name}.ipynb", as_version=4)
        _, answers = source_notebook(name)
        filled = filled_notebook(released, answers)
        otter = scratch / "otter" / name
        otter.mkdir(parents=True, exist_ok=True)
        labels: dict = {"solution": None, "blank": None}
        submit(root, name, "solution", with_outputs(filled))
        nbformat.write(solution_notebook(name), otter / "solution.ipynb")
        submit(root, name, "blank", released)
        shutil.copy(NOTEBOOKS / f"{name}.ipynb", otter / "blank.ipynb")
        for m in pick_mutants(name, fail=fail, passing=passing):
            label = f"{m.expect}-{m.name}".replace("_", "-")
            labels[label] = m
            submit(root, name, label, nbgrader_mutant(filled, m))
            nbformat.write(mutant_notebook(m), otter / f"{label}.ipynb")
        if name == edited:
            copy = nbformat.read(root / "submitted" / "solution" / name / f"{name}.ipynb", as_version=4)
            data["edited"] = _edit_given(copy)
            submit(root, name, "given-edited", copy)
        data["labels"][name] = labels
        data["seconds"][name] = {"submissions": len(labels) + (name == edited)}

    def one_group(group: list[str], root: Path) -> None:
        build_nbgrader(group, out=root)
        env = nbgrader_env(root, {"COURSE_NBGRADER_KERNEL": "1"})     # nbgrader's own, in the kernel
        for name in group:
            data["roots"][name] = root
        _generate(data, root, group, env, timed)
        ready = [n for n in group if (root / "release" / n / f"{n}.ipynb").exists()]
        for name in ready:
            blank = root / "release" / name / f"{name}.ipynb"
            data["validate"][name] = nbgrader(root, "validate", str(blank), env=env)
            submit_all(root, name)
        _autograde(data, root, ready, env, timed)
        for name in ready:
            if name in feedback:
                data["feedback"][name] = nbgrader(root, "generate_feedback", name, env=env)
        export = root.parent / f"{root.name}.csv"
        r = nbgrader(root, "export", "--to", str(export), env=env)
        data["export"].update({name: r for name in group})
        if export.exists():
            data["nbgrader_rows"].update(read_export(export))

    split = [names[i::groups] for i in range(groups)]
    with ThreadPoolExecutor(groups) as pool:
        jobs = [pool.submit(one_group, g, scratch / f"course-{i + 1}") for i, g in enumerate(split) if g]
        for job in jobs:
            job.result()

    data["course_rows"] = {}
    for name in [n for n in names if n in data["labels"]]:
        for w in workers:
            started = time.monotonic()
            rows = grade_folder(name, scratch / "otter" / name, scratch / f"grades-{w}" / name, workers=w)
            data["seconds"][name][f"course_grade_workers_{w}"] = time.monotonic() - started
        data["course_rows"][name] = rows
    return data


def _generate(data: dict, root: Path, group: list[str], env: dict, timed: bool) -> None:
    """``nbgrader generate_assignment``: once for the group's notebooks, or one at a time when
    ``timed``; the results into ``data["generate"]``."""
    if timed:
        for name in group:
            data["generate"][name] = nbgrader(root, "generate_assignment", name, env=env)
    else:
        r = nbgrader(root, "generate_assignment", "*", env=env)
        data["generate"].update({name: r for name in group})


def _autograde(data: dict, root: Path, ready: list[str], env: dict, timed: bool) -> None:
    """``nbgrader autograde`` of the notebooks released: once for them all, or one at a time, each
    timed, when ``timed``; the results into ``data["autograde"]``."""
    if timed:
        for name in ready:
            started = time.monotonic()
            data["autograde"][name] = nbgrader(root, "autograde", name, env=env)
            data["seconds"][name]["nbgrader"] = time.monotonic() - started
    elif ready:
        r = nbgrader(root, "autograde", "*", env=env)
        data["autograde"].update({name: r for name in ready})


def nbgrader_points(data: dict, name: str, student: str) -> dict[str, float | None]:
    """Per question, from `nbgrader export` (None: waits for a hand grade)."""
    from autograder.assignment import load

    row = data["nbgrader_rows"][(name, student)]
    return {q.name: (float(row[q.name]) if row.get(q.name, "") != "" else None) for q in load(name).questions}


def comparison(data: dict) -> list[dict]:
    """One row per notebook and submission: the automatically graded questions' points under
    nbgrader and under course grade, and whether they all agree."""
    from autograder.assignment import load

    rows = []
    for name, labels in data["labels"].items():
        auto = load(name).auto
        for label in labels:
            course = data["course_rows"][name][label]
            ours = nbgrader_points(data, name, label)
            per_q = {q.name: (ours[q.name], float(course[q.name] or 0)) for q in auto}
            rows.append({"notebook": name, "submission": label, "questions": per_q,
                         "nbgrader": sum(a or 0 for a, _ in per_q.values()),
                         "course_grade": sum(b for _, b in per_q.values()),
                         "max": sum(q.max_points for q in auto), "status": course["grading_status"],
                         "full": {q.name: q.max_points for q in auto},
                         "same": all(a is not None and abs(a - b) < 1e-9 for a, b in per_q.values())})
    return rows


def equality_table(rows: list[dict]) -> str:
    """Markdown: per notebook, the automatic points of the solution, the blank and each mutant under
    nbgrader and under course grade ("9 = 9" when they agree on every question)."""
    def cell(r: dict) -> str:
        lost = [q for q, (a, _) in r["questions"].items() if (a or 0) < r["full"][q] - 1e-9]
        where = f" ({', '.join(lost)})" if lost and r["submission"] not in ("solution", "blank") else ""
        sign = "=" if r["same"] else "≠"
        return f"{r['nbgrader']:g} {sign} {r['course_grade']:g}{where}"

    lines = ["| notebook | points | solution | blank | mutants (questions that lost points) | per question |",
             "|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["notebook"] for r in rows):
        mine = {r["submission"]: r for r in rows if r["notebook"] == name}
        mutants = "; ".join(f"{label}: {cell(r)}" for label, r in mine.items()
                            if label not in ("solution", "blank"))
        same = "same" if all(r["same"] for r in mine.values()) else "DIFFERENT"
        lines.append(f"| {name} | {mine['solution']['max']:g} | {cell(mine['solution'])} | "
                     f"{cell(mine['blank'])} | {mutants} | {same} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from instructor.build import masters

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", help="NN_name (default: every master)")
    parser.add_argument("--mutants", type=int, default=3,
                        help="wrong answers per notebook, besides one right alternative (default 3)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args(argv)
    names = args.notebooks or masters()
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="nbgrader-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    started = time.monotonic()
    try:
        data = grade_both(names, scratch, fail=args.mutants, timed=True, workers=(1, 2))
        rows = comparison(data)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print(equality_table(rows))
    print()
    print("| notebook | submissions | nbgrader autograde, s each | course grade --workers 1 | --workers 2 |")
    print("|---|---|---|---|---|")
    timing = {}
    for name, s in data["seconds"].items():
        n = s["submissions"]
        timing[name] = {"submissions": n, "nbgrader_autograde": round(s["nbgrader"] / n, 2),
                        "course_grade_workers_1": round(s["course_grade_workers_1"] / n, 2),
                        "course_grade_workers_2": round(s["course_grade_workers_2"] / n, 2)}
        t = timing[name]
        print(f"| {name} | {n} | {t['nbgrader_autograde']} | {t['course_grade_workers_1']} "
              f"| {t['course_grade_workers_2']} |")
    summary = {"benchmark": "nbgrader_grading", "notebooks": names, "mutants": args.mutants,
               "all_same": all(r["same"] for r in rows), "rows": len(rows),
               "different": [f"{r['notebook']} {r['submission']}" for r in rows if not r["same"]],
               "seconds_per_submission": timing, "wall_seconds": round(time.monotonic() - started, 1),
               "load_average_at_start": [round(x, 2) for x in load],
               "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}
    print(json.dumps(summary))
    return 0 if summary["all_same"] else 1


if __name__ == "__main__":
    sys.exit(main())
