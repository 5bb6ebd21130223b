import functools

import pytest

from autograder import own_class as own_class_mod


@pytest.fixture(scope="session")
def own_class(tmp_path_factory):
    """``own_class(notebook)``: the notebook's own answers (solution, blank, mutants, degenerate
    answers, shortcuts) graded as one class, once per test run (:mod:`autograder.own_class`); the
    mutation, degenerate and shortcut suites all read it."""
    root = tmp_path_factory.mktemp("own-classes")

    @functools.cache
    def graded(notebook: str) -> own_class_mod.OwnClass:
        return own_class_mod.grade_class(notebook, root / notebook)
    return graded
