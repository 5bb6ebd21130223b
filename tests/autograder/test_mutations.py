"""The mutation suite: every deliberately buggy answer loses points in its own question (and only
there), every alternative correct answer and the solution score 100%, and the blank student
notebook scores 0 with grading finishing cleanly. Each notebook's own answers are graded in one
batch through the engine (:mod:`autograder.own_class`), shared with the degenerate and shortcut suites."""

import json

import pytest

from autograder import assignment, mutants

BUILT = [n for n in assignment.names() if (mutants.BUILD / f"{n}-solution.ipynb").exists()]
pytestmark = pytest.mark.e2e


def _cases():
    for name in BUILT:
        yield pytest.param(name, None, id=f"{name}-solution")
        for mutant in mutants.load_mutants(name):
            yield pytest.param(name, mutant.name, id=f"{name}-{mutant.expect}-{mutant.name}")


@pytest.mark.parametrize("name, mutant_name", list(_cases()))
def test_mutant_scores_as_expected(name, mutant_name, own_class):
    batch = own_class(name)
    if mutant_name is None:
        row = batch.rows["solution"]
        assert row["grading_status"] == "ok"
        assert mutants.lost_questions(name, row) == [], f"the solution of {name} lost points"
        return
    stem, mutant = next((s, m) for s, m in batch.mutants.items() if m.name == mutant_name)
    row = batch.rows[stem]
    assert row["grading_status"] == "ok", row["grading_status"]
    lost = mutants.lost_questions(name, row)
    if mutant.expect == "pass":
        assert lost == [], f"correct alternative {mutant_name} lost points in {lost}"
    else:
        assert lost == [mutant.question], (
            f"buggy {mutant_name} ({mutant.why}) lost points in {lost or 'nothing'}, "
            f"expected {mutant.question} only")
        shown = mutants.told(batch.out / "results", stem, mutant.question)
        assert not mutant.hint or any(mutant.hint in text for text in shown), (
            f"buggy {mutant_name} ({mutant.why}) was not told {mutant.hint!r}: {shown}")
        if mutant.fails:                  # one slip costs its points once
            doc = json.loads((batch.out / "results" / f"{stem}.json").read_text(encoding="utf-8"))
            failed = {t["name"] for t in doc["tests"] if not t["passed"]}
            assert failed == {n.strip() for n in mutant.fails.split(",")}, f"{mutant_name} failed {failed}"


@pytest.mark.parametrize("name", BUILT)
def test_blank_notebook_scores_zero_cleanly(name, own_class):
    row = own_class(name).rows["blank"]
    assert row["grading_status"] == "ok", row["grading_status"]
    assert float(row["total_points_earned"]) == 0


def test_suite_is_big_enough():
    everything = [m for name in assignment.names() for m in mutants.load_mutants(name)]
    assert sum(m.expect == "fail" for m in everything) >= 30
    assert sum(m.expect == "pass" for m in everything) >= 8


def test_grading_leaves_the_stories_cache_intact(own_class):
    """The sandbox binds the stories back into its private /tmp; that must never touch the file."""
    from course import data

    if BUILT:
        own_class(BUILT[-1])
    cached = data.cache_dir() / data.CACHE_NAME
    if cached.exists():
        assert data.check_cache(cached) is None


@pytest.mark.parametrize("name", [n for n in BUILT if assignment.load(n).known_mistakes])
def test_each_named_mistake_is_named_and_nothing_else_is(name, own_class):
    """Graded through the engine, a named mistake's mutant is told its own mistake and only it; the
    solution, the blank notebook, the correct alternatives and every other mutant are told none
    (a known mistake is never said to a right answer, nor put on another mistake)."""
    batch = own_class(name)

    def said(stem: str) -> list[str]:
        doc = json.loads((batch.out / "results" / f"{stem}.json").read_text(encoding="utf-8"))
        return [m["id"] for m in doc["mistakes"]]

    for stem in ("solution", "blank"):
        assert said(stem) == [], stem
    named = 0
    for stem, mutant in batch.mutants.items():
        expected = [mutant.name] if mutant.named else []
        assert said(stem) == expected, f"{mutant.name} ({mutant.why}) was told {said(stem)}"
        named += mutant.named
    told = {stem: said(stem) for stem in [*batch.degenerates, *batch.shortcuts] if said(stem)}
    assert told == {stem: ids for (nb, stem), ids in SAME_AS_A_MISTAKE.items() if nb == name}
    assert named >= 4


# degenerate answers that behave exactly like a named mistake (and are told so, rightly)
SAME_AS_A_MISTAKE = {("08_causal", "degenerate__q1__switch_ignored"): ["masked_fill_not_assigned"],
                     ("04_head", "degenerate__q1__values_uniform_weights"): ["returns_values"],
                     ("04_head", "degenerate__q1__ignores_K"): ["q_for_keys"]}
