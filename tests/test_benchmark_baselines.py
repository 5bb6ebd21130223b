"""The grading benchmark's stock baselines really grade (benchmarks/grade_throughput.py): Otter's own
zip under ``otter run`` and nbgrader's ``autograde`` score two submissions as ``course grade`` does, and
a baseline that fails or scores otherwise is reported, so that no ratio is printed over it."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from benchmarks import baselines, grade_throughput

NAME = "01_no_talking"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("baselines")
    asg, sol, blank, zip_ = grade_throughput.find_assignment(NAME, tmp)
    members = grade_throughput.synthetic_class(sol, blank, 2, tmp / "class")
    grade_throughput.course_grade(asg, tmp / "class", tmp / "course", 1)
    expected = baselines.course_points(tmp / "course", grade_throughput.auto_questions(asg))
    done, bad = grade_throughput.run_baselines(asg, zip_, members, tmp / "class", tmp, expected,
                                               otter_grade=False)
    return {"zip": zip_, "members": members, "expected": expected, "done": done, "bad": bad}


def test_otter_zip_is_otters_with_the_course_tests(two):
    with zipfile.ZipFile(two["zip"]) as z:
        names = set(z.namelist())
    assert "run_otter.py" in names                   # Otter's own entry point, not the course engine
    tests = ROOT / "autograder" / "assignments" / NAME / "tests"
    assert {f"tests/{p.name}" for p in tests.glob("*.py")} <= names


def test_two_submissions_graded_by_otter_run_and_nbgrader_as_by_course_grade(two):
    assert [m.kind for m in two["members"]] == ["solution", "blank"]
    assert two["bad"] == []
    assert {b.name for b in two["done"]} == {"otter run", "nbgrader autograde"}
    for base in two["done"]:
        assert [r.stem for r in base.runs] == [m.stem for m in two["members"]]
        solution = base.runs[0].points
        assert sum(solution.values()) > 0 and sum(base.runs[1].points.values()) == 0


def test_a_failed_or_different_run_is_a_problem(two):
    expected = two["expected"]
    stem = two["members"][0].stem
    q = next(iter(expected[stem]))
    failed = baselines.Baseline("otter run", [baselines.Run(stem, None, error="exit 1: FileNotFoundError")])
    more = {**expected[stem], q: expected[stem][q] + 1}
    other = baselines.Baseline("otter run", [baselines.Run(stem, more)])
    assert baselines.problems(failed, expected) == [f"otter run {stem}: failed: exit 1: FileNotFoundError"]
    assert baselines.problems(other, expected)[0].startswith(f"otter run {stem}: {q} ")


def test_the_course_engine_zip_is_not_taken_for_otters(tmp_path):
    engine_zip = ROOT / "autograder" / "build" / f"{NAME}-autograder.zip"
    if engine_zip.exists():          # course build's Gradescope zip carries no tests/: not Otter's
        assert not baselines._zip_tests(engine_zip)
    with pytest.raises(baselines.BaselineError, match="not"):
        other_tests = ROOT / "autograder" / "assignments" / "02_with_position" / "tests"
        baselines.otter_zip(NAME, tmp_path, tests=other_tests)
