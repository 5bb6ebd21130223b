"""`make demo` fails (exit status 1) when a solution notebook fails, and only then (or when grading fails)."""
from __future__ import annotations

import pytest

from instructor import demo


@pytest.fixture
def quiet(monkeypatch):
    monkeypatch.setattr(demo, "stories", lambda: None)
    monkeypatch.setattr(demo, "no_talking", lambda: None)
    monkeypatch.setattr(demo, "build", lambda: ["01_no_talking"])


@pytest.mark.parametrize("ran, graded, code", [(True, True, 0), (False, True, 1), (True, False, 1)])
def test_demo_exit_status(quiet, monkeypatch, capsys, ran, graded, code):
    monkeypatch.setattr(demo, "grade", lambda names: graded)
    import instructor.solutions

    monkeypatch.setattr(instructor.solutions, "main", lambda argv: 0 if ran else 1)
    assert demo.main() == code
    if code:
        assert "FAILED" in capsys.readouterr().err


def test_no_masters_is_not_a_failure(monkeypatch):
    monkeypatch.setattr(demo, "stories", lambda: None)
    monkeypatch.setattr(demo, "no_talking", lambda: None)
    monkeypatch.setattr(demo, "build", lambda: [])
    assert demo.main() == 0
