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
from course import handles

WITH_CATALOGUE = [n for n in assignment.names() if assignment.load(n).known_mistakes]


def test_the_catalogue_covers_the_pieces_of_03_to_08():
    assert {"03_attention", "04_head", "05_multihead", "06_block", "08_causal"} <= set(WITH_CATALOGUE)
    assert sum(m.named for n in WITH_CATALOGUE for ms in assignment.load(n).known_mistakes.values()
               for m in ms) >= 35


def _local(code: str, piece: str, names: dict):
    """A known answer's piece as a student's, behind a handle (as a check in the notebook sees it)."""
    return handles.student(judge_side.known(code, piece, names))


@pytest.mark.parametrize("name", WITH_CATALOGUE)
def test_every_named_mistake_is_told_apart_and_named_when_it_is_the_students(name):
    """Each named mistake, as a student's piece, is named itself and nothing else; each right answer
    behaves as right; every piece the judge runs has right answers to be told apart from."""
    asg = assignment.load(name)
    for question, known in asg.known_mistakes.items():
        payload = mistakes.payload(known)
        names = judge_side.context(asg.given_code, payload["right"])
        for piece in payload["pieces"]:
            assert any(r["piece"] == piece for r in payload["right"]), f"{name} {question} {piece}"
        for m in known:
            kind, found = judge_side.name(_local(m.code, m.replaces, names), m.replaces,
                                          [x for x in payload["mistakes"] if x["piece"] == m.replaces],
                                          payload["right"], asg.given_code)
            if m.named:
                assert (kind, found) == (judge_side.NAMED, [m.name]), f"{name} {m.name} ({m.why})"
            else:
                assert (kind, found) == (judge_side.RIGHT, []), f"{name} {m.name} is not right"


def test_an_outer_piece_is_not_named_while_an_inner_one_is_wrong():
    """08: a MultiHead that drops the causal switch makes a right Block behave like one that ignores
    it; the judge names the MultiHead's mistake and stops there."""
    asg = assignment.load("08_causal")
    payload = mistakes.payload(asg.known_mistakes["q1"])
    names = judge_side.context(asg.given_code, payload["right"])
    wrong = next(m for m in asg.known_mistakes["q1"] if m.name == "multihead_drops_causal")
    judge_side._define(wrong.code, names)                 # the student's MultiHead, under their Block
    block = next(r for r in payload["right"] if r["piece"] == "Block")
    right_block = _local(block["code"], "Block", names)
    assert judge_side.name(right_block, "Block", [m for m in payload["mistakes"] if m["piece"] == "Block"],
                           payload["right"], asg.given_code)[1] == ["block_ignores_causal"]
    first = {p: next(r["code"] for r in payload["right"] if r["piece"] == p) for p in ("Attention", "Head")}
    pieces = {"Attention": _local(first["Attention"], "Attention", names),
              "Head": _local(first["Head"], "Head", names),
              "MultiHead": _local(wrong.code, "MultiHead", names), "Block": right_block}
    assert judge_side.name_all(pieces.get, payload, asg.given_code) == ["multihead_drops_causal"]


def test_a_piece_that_raises_everywhere_or_gives_no_tensors_is_named_nothing():
    known = assignment.load("03_attention").known_mistakes["q1"]
    payload = mistakes.payload(known)

    def raises(*args, **kwargs):
        raise ValueError("no")

    for piece in (raises, lambda *a, **k: None):
        assert judge_side.name(piece, "Attention", payload["mistakes"], payload["right"]) == (
            judge_side.UNKNOWN, [])


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
