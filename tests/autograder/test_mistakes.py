"""Named mistakes without the engine: the catalogue (every named mistake told apart from the right
answers and from every other named mistake on the judge's inputs, and named when the student's
piece is the mistake's own), the judge's ids read as data, and the class's counts (report.html's
section and mistakes.csv). test_mutations.py grades every mutant through the engine and checks
that each named mistake, and nothing else, is told."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from autograder import assignment, mistakes, mistakes_report
from autograder.checks import mistakes as judge_side
from autograder.results import Result

WITH_CATALOGUE = [n for n in assignment.names() if assignment.load(n).known_mistakes]


def test_the_catalogue_covers_attention_in_03_and_08():
    assert {"03_attention", "08_causal"} <= set(WITH_CATALOGUE)
    assert sum(m.named for n in WITH_CATALOGUE for ms in assignment.load(n).known_mistakes.values()
               for m in ms) >= 15


@pytest.mark.parametrize("name", WITH_CATALOGUE)
def test_every_named_mistake_is_told_apart_and_named_when_it_is_the_students(name):
    for question, known in assignment.load(name).known_mistakes.items():
        named = [m for m in known if m.named]
        right = [m for m in known if not m.named]
        assert right, f"{name} {question}: no right answer to tell the mistakes apart from"
        payload = mistakes.payload(known)
        for m in named:
            piece = judge_side.known(m.code, m.replaces)
            found = judge_side.name(piece, m.replaces, payload["mistakes"],
                                    [r["code"] for r in payload["right"]])
            assert found == [m.name], f"{name} {m.name} ({m.why}): named {found}"
        for r in right:
            piece = judge_side.known(r.code, r.replaces)
            assert judge_side.name(piece, r.replaces, payload["mistakes"],
                                   [x["code"] for x in payload["right"]]) == [], f"{name} {r.name} was named"


def test_a_piece_that_raises_everywhere_or_gives_no_tensors_is_named_nothing():
    known = assignment.load("03_attention").known_mistakes["q1"]
    payload = mistakes.payload(known)
    right = [r["code"] for r in payload["right"]]

    def raises(*args, **kwargs):
        raise ValueError("no")

    assert judge_side.name(raises, "Attention", payload["mistakes"], right) == []
    assert judge_side.name(lambda *a, **k: None, "Attention", payload["mistakes"], right) == []


def test_the_judges_ids_are_data_read_against_the_catalogue():
    known = assignment.load("03_attention").known_mistakes
    said = mistakes.named(known, "q1", ["no_scale", "no_scale", "nonsense", 3, "ok_einsum", "softmax_dim0",
                                        "energy_sign", "transpose_T"])
    assert [n.id for n in said] == ["no_scale", "softmax_dim0", "energy_sign"]      # capped, each once
    assert said[0].sentence.startswith("your Attention behaves exactly like one that forgets")
    assert mistakes.named(known, "q2", ["no_scale"]) == []                      # another question's
    assert mistakes.named(known, "q1", "no_scale") == []                        # not a list
    assert mistakes.from_json([n.as_dict() for n in said]) == said
    assert mistakes.from_json([{"question": "q1"}, "x", None]) == []


def test_a_mutant_header_reads_its_says_line(tmp_path: Path):
    folder = tmp_path / "00_toy" / "mutants"
    folder.mkdir(parents=True)
    (folder / "m.py").write_text("# question: q1\n# expect: fail\n# replaces: Attention\n# why: w\n"
                                 "# says: forgets the scale\ndef Attention(q, k, v):\n    return q\n")
    m = mistakes.read_mutant(folder / "m.py")
    assert m.named and m.says == "forgets the scale" and m.code.startswith("def Attention")
    assert m.sentence == "your Attention behaves exactly like one that forgets the scale"


def _row(file: str, q1: float, named: list[str], ran: bool = True) -> Result:
    known = assignment.load("03_attention").known_mistakes
    r = Result(file=file, stem=file.removesuffix(".ipynb"), status="ok", question_points={"q1": q1},
               tests_ran=ran)
    r.mistakes = mistakes.named(known, "q1", named)
    return r


def test_the_class_counts_each_mistake_and_the_unexplained_with_their_rows():
    asg = assignment.load("03_attention")
    full = asg.auto[0].max_points
    rows = [_row("a.ipynb", 0.0, ["no_scale"]), _row("b.ipynb", 1.0, ["no_scale"]),
            _row("c.ipynb", 0.0, ["softmax_dim0"]), _row("d.ipynb", 0.0, []), _row("e.ipynb", full, []),
            _row("f.ipynb", 0.0, [], ran=False)]
    found = mistakes_report.counts(asg, rows)
    q1 = [(c.mistake, [r.file for r in c.rows]) for c in found if c.question == "q1"]
    assert q1 == [("no_scale", ["a.ipynb", "b.ipynb"]), ("softmax_dim0", ["c.ipynb"]),
                  (mistakes_report.NONE_NAMED, ["d.ipynb"])]
    table = list(csv.reader(io.StringIO(mistakes_report.csv_bytes(found, 5).decode())))
    assert table[0] == ["question", "mistake", "sentence", "rows", "share"]
    assert table[1][:2] == ["q1", "no_scale"] and table[1][3:] == ["2", "0.4000"]
    page = mistakes_report.section_html(found, lambda f: f)
    assert page.count("<h3 id='mistake-") == len(found)
    assert "href='#mistake-0'>2</a>" in page and "href='feedback/d.html'" in page


def test_the_feedback_and_gradescope_name_the_mistake_under_its_question():
    from autograder import gradescope, report
    asg = assignment.load("03_attention")
    r = _row("a.ipynb", 0.0, ["no_scale"])
    line = "The mistake, named**: your Attention behaves exactly like one that forgets to divide"
    md = report.feedback_md(asg, r)
    assert line in md and md.index("## q1") < md.index(line) < md.index("## q2")
    doc = gradescope.results_json(asg, r, "user")
    q1 = next(t for t in doc["tests"] if t["name"] == "q1")
    assert q1["output"].startswith("The mistake, named: your Attention behaves exactly like one that forgets")
    assert doc["extra_data"]["mistakes"] == [m.as_dict() for m in r.mistakes]
    assert all("named" not in t["output"] for t in doc["tests"] if t["name"] != "q1")
