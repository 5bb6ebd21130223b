"""The Gradescope set-up sheet `course build` writes beside each zip (instructor/gradescope_sheet.py):
the points split into automatic and hand-graded, the container and the timeout from the committed
measurements, the file students submit, the outline of the hand-graded questions."""
import json

import pytest

from autograder.assignment import load
from instructor import gradescope_sheet as gs
from instructor import publish
from instructor.registry import notebooks


def test_every_notebook_was_measured_on_its_solution_and_heaviest_mutant():
    doc = json.loads(gs.LIMITS.read_text())
    assert doc["cpus"] == 0.5
    for name in notebooks():
        runs = doc["notebooks"][name]
        assert {"solution", "heaviest mutant"} <= set(runs), name
        assert runs["solution"]["score"] == load(name).max_points, name      # the solution: full marks
        assert all(r["sandbox"] == "user" and r["peak_mb"] > 100 for r in runs.values()), name


def test_the_sheet_of_03_splits_the_points_and_names_every_field():
    text = gs.sheet(load("03_attention"))
    assert "| Total points | **15**: the automatic points only (1 more are graded by hand in the " \
           "second assignment: 16 in all) |" in text
    assert "**Ubuntu / 22.04 / Base**" in text
    assert "**0.5 CPU, 0.75GB RAM** (the default)" in text and "**10 minutes**" in text
    assert "one file, **`03_attention.ipynb`**" in text and "Review Grades -> Publish Grades" in text
    assert "| q3 | 1 | 2 |" in text                      # the outline of the second assignment


def test_a_notebook_near_the_default_memory_gets_the_next_container():
    peak = max(r["peak_mb"] for r in gs.measured("08_causal")["runs"].values())
    assert peak * gs.MEMORY_MARGIN > 768
    assert "**1.0 CPU, 1.5GB RAM**" in gs.sheet(load("08_causal"))
    assert gs.container(500)[2] == "0.5 CPU, 0.75GB RAM" and gs.container(5000)[2] == "4.0 CPU, 6.0GB RAM"
    assert gs.timeout_minutes(30) == 10 and gs.timeout_minutes(900) == 40     # 45 needed: at most 40


def test_an_unmeasured_notebook_says_how_to_measure_it(tmp_path):
    text = gs.sheet(load("03_attention"), limits=tmp_path / "none.json")
    assert "not measured yet: run `python -m benchmarks.gradescope_run --limits" in text


@pytest.mark.parametrize("name", ["01_no_talking", "09_gpt"])
def test_the_sheet_is_written_beside_the_zip(tmp_path, name):
    path = gs.write(tmp_path, name)
    assert path == tmp_path / f"{name}-gradescope.md"
    assert path.read_text().startswith(f"# {name} on Gradescope")


# When Gradescope lets students see their total: not while a test they cannot see yet is not
# `hidden` (its autograder specification, "Controlling Test Case Visibility").
PUBLISHED = "once you publish the grades (Review Grades -> Publish Grades)"
TOTAL = {("after_published", "visible"): PUBLISHED,
         ("after_due_date", "visible"): "once the due date has passed",
         ("visible", "visible"): "at once",
         ("hidden", "visible"): "at once",
         ("visible", "after_published"): PUBLISHED,
         ("after_due_date", "after_published"): "once the due date has passed and you have published "
                                                "the grades",
         ("visible", "hidden"): "at once"}


@pytest.mark.parametrize("scored, public", sorted(TOTAL))
def test_the_sheet_says_what_students_see_of_the_total_as_gradescope_does(scored, public):
    settings = publish.Gradescope(scored, public)
    assert gs.total_shown(settings) == TOTAL[scored, public]
    text = gs.sheet(load("03_attention"), settings=settings)
    assert f'`visibility = "{scored}"`, `public_visibility = "{public}"`' in text
    assert f"each question's test, its points and its cases: **{gs.SHOWN[scored]}**" in text
    assert f"the public tests' summary (0 points): **{gs.SHOWN[public]}**" in text
    assert f"**the total: {TOTAL[scored, public]}**" in text
    assert "the total shows at once" not in text                 # what the sheet wrongly said before
    held = next(ln for ln in text.splitlines() if ln.startswith("| A row whose code the rules flagged"))
    assert f"Your automatic points (... of {gs.num(load('03_attention').max_points)}) are held for your " \
           "instructor's review" in held
    assert "that 0 is not your grade" in held and "Students see that sentence at once" in held
    if TOTAL[scored, public] == "at once":
        assert "students see the total of 0 at once" in held
    elif "publish" in TOTAL[scored, public]:
        assert "read flagged rows before you publish the grades: until then students see no total" in held
    else:
        assert "read flagged rows before the due date: until then students see no total" in held
    assert ("Gradescope means `hidden` for tests worth no points" in text) == (scored == "hidden")


def test_the_sheet_follows_course_toml_by_default():
    settings = publish.gradescope()
    assert gs.sheet(load("03_attention")) == gs.sheet(load("03_attention"), settings=settings)
    assert f"**the total: {gs.total_shown(settings)}**" in gs.sheet(load("03_attention"))
