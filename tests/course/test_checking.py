"""A check leaves the student's notebook as it found it (course/checking.py, course/otter_check.py,
course/nbgrader_check.py): the random numbers drawn next, the names and what they hold, the
networks' train/eval flags, whether gradients are on."""
import random

import numpy as np
import pytest
import torch

from course import nbgrader_check
from course.checking import left_as_found
from course.otter_check import Grader


def _draws() -> tuple:
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def _meddle(namespace: dict) -> None:
    """What a careless check does: seeds and draws, binds and rebinds names, switches a network to
    eval and gradients off."""
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    _draws()
    namespace["added"] = 1
    namespace["x"] = "rebound"
    namespace["net"].eval()
    torch.set_grad_enabled(False)


def _namespace() -> dict:
    return {"x": [1, 2], "net": torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.1))}


def test_left_as_found_puts_back_what_a_check_changed():
    ns = _namespace()
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    untouched = _draws()
    random.seed(5), np.random.seed(5), torch.manual_seed(5)
    x, net = ns["x"], ns["net"]
    with left_as_found(ns):
        _meddle(ns)
    assert _draws() == untouched
    assert ns == {"x": x, "net": net} and ns["x"] is x
    assert all(m.training for m in net.modules()) and torch.is_grad_enabled()


def test_left_as_found_also_when_the_check_fails():
    ns = _namespace()
    torch.manual_seed(5)
    before = torch.random.get_rng_state()
    with pytest.raises(AssertionError), left_as_found(ns):
        _meddle(ns)
        raise AssertionError("the check failed")
    assert torch.equal(torch.random.get_rng_state(), before) and "added" not in ns
    assert torch.is_grad_enabled()


class _Result:
    """Like Otter's result: its HTML draws a random emoji for a check that passed."""

    def _repr_html_(self) -> str:
        return "passed " + random.choice("abc")

    def __repr__(self) -> str:
        return "q1 results: All test cases passed!"


class _Otter:
    """Like otter.Notebook.check: runs the tests against the environment it is given."""

    def __init__(self) -> None:
        self.seen: dict | None = None

    def check(self, question: str, global_env: dict) -> _Result:
        self.seen = global_env
        _meddle(global_env)
        return _Result()


def test_grader_check_runs_on_the_callers_names_and_leaves_them():
    otter = _Otter()
    grader = Grader(otter)
    ns = _namespace()
    ns["grader"] = grader
    random.seed(3), np.random.seed(3), torch.manual_seed(3)
    untouched = _draws()
    random.seed(3), np.random.seed(3), torch.manual_seed(3)
    shown = eval("grader.check('q1')", ns)     # the notebook's own globals, as a cell calls it
    assert otter.seen is ns
    assert shown._repr_html_().startswith("passed ") and repr(shown) == "q1 results: All test cases passed!"
    assert _draws() == untouched                # showing the result drew nothing either
    assert set(ns) == {"x", "net", "grader", "__builtins__"} and ns["x"] == [1, 2]


def test_nbgrader_check_leaves_the_callers_names():
    glob = {**_namespace(), "check": nbgrader_check.check, "meddle": _meddle}
    torch.manual_seed(4)
    before = torch.random.get_rng_state()
    exec("check(lambda: meddle(globals()), 'message', name='q1 test')", glob)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert "added" not in glob and glob["x"] == [1, 2] and all(m.training for m in glob["net"].modules())
