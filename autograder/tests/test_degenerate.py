"""The degenerate-answer suite: answers that do no work (zeros, ones, constants, uniform weights, the
input echoed, fresh random numbers, tensors without values, `return True`, hard-coded values) keep
at most their question's cap (its shape points) under `course grade`. Each notebook's answers are
graded in one batch through the real command; every auto-graded question has a spec entry."""
from functools import cache
from pathlib import Path

import pytest

from autograder import degenerate, mutants
from instructor import build

BUILT = [n for n in build.masters() if (mutants.BUILD / f"{n}-solution.ipynb").exists()]
pytestmark = pytest.mark.slow


@cache
def graded(name: str, tmp_root: str) -> tuple[dict, dict]:
    subs = Path(tmp_root) / name / "submissions"
    written = degenerate.write_submissions(name, subs)
    rows = mutants.grade_folder(name, subs, Path(tmp_root) / name / "grades") if written else {}
    return rows, written


@pytest.fixture(scope="session")
def grading_root(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("degenerate-suite"))


@pytest.mark.parametrize("name", BUILT)
def test_every_auto_graded_question_has_a_spec(name):
    assert degenerate.missing_questions(name) == []


@pytest.mark.parametrize("name", BUILT)
def test_degenerate_answers_stay_under_their_caps(name, grading_root):
    rows, written = graded(name, grading_root)
    assert written, f"{name} has no degenerate answers"
    assert degenerate.over_cap(rows, written) == []


def test_every_kind_is_generated_and_runs():
    """Each kind's FAKE code is valid Python that makes a tensor of the asked shape."""
    import torch

    for kind in degenerate.KINDS:
        code = degenerate.answer_code("y = FAKE(x, (2, 3, 4)); w = FAKE_WEIGHTS(x, (2, 3, 3))", kind)
        env = {"torch": torch, "x": torch.randn(2, 3, 5)}
        exec(compile(code, kind, "exec"), env)
        assert tuple(env["y"].shape) == (2, 3, 4) and tuple(env["w"].shape) == (2, 3, 3), kind
    env = {"torch": torch, "x": torch.randn(2, 3, 5)}
    exec(compile(degenerate.answer_code("y = FAKE(x, (2, 3, 4))", "echo"), "echo", "exec"), env)
    assert torch.equal(env["y"], env["x"][..., :4])          # site by site: the input itself
