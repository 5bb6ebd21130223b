"""The degenerate-answer suite: answers that do no work (zeros, ones, constants, uniform weights, the
input echoed, fresh random numbers, tensors without values, `return True`, hard-coded values) keep
at most their question's cap (its shape points) under `course grade`. Each notebook's answers are
graded in one batch with its other own answers (:mod:`autograder.own_class`); every auto-graded
question has a spec entry."""

import pytest

from autograder import assignment, degenerate, mutants

BUILT = [n for n in assignment.names() if (mutants.BUILD / f"{n}-solution.ipynb").exists()]
pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("name", BUILT)
def test_every_auto_graded_question_has_a_spec(name):
    assert degenerate.missing_questions(name) == []


@pytest.mark.parametrize("name", BUILT)
def test_degenerate_answers_stay_under_their_caps(name, own_class):
    batch = own_class(name)
    assert batch.degenerates, f"{name} has no degenerate answers"
    assert degenerate.over_cap(batch.rows, batch.degenerates) == []


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
