"""Similarity flags (autograder/similarity.py): what counts as an answer, what normalising hides, what
the report shows of hostile code, and a class of 37 submissions of 08_causal graded through the real
`course grade` (30 honest students built from independently written answers, six disguised copies,
a disguised copy of the master): every copy flagged, no independent pair flagged."""
import csv
import json
from pathlib import Path

import pytest

from autograder import similarity as sim
from autograder.assignment import load
from benchmarks import similarity_class as sc

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def course():
    return load(sc.NAME).given_code


def _lines(src, names):
    return sorted(text for text, _a, _b in sim.normalise(src, names))


@pytest.mark.parametrize("disguise", ["rename", "reorder", "recomment", "swap_matmul"])
def test_normalising_hides_each_disguise(disguise, course):
    """Every answer of the class, disguised, normalises to the same lines (in some order)."""
    names = sim.CourseNames.of(course)
    f = getattr(sc, disguise)
    for piece, answers in sc.ANSWERS.items():
        for src in answers:
            if src.strip():
                assert _lines(f(src), names) == _lines(src, names), (piece, disguise, src)


def test_normalising_keeps_what_differs(course):
    names = sim.CourseNames.of(course)
    a = "def Attention(q, k, v, causal=False):\n    w = torch.softmax(q @ k.mT, -1)\n    return w @ v, w\n"
    b = "def Attention(q, k, v, causal=False):\n    w = torch.sigmoid(q @ k.mT)\n    return w @ v, w\n"
    assert _lines(a, names) != _lines(b, names)
    assert sim.normalise("x = (\n", names) == [("x=(", 1, 1)]        # does not parse: lines kept
    assert sim.normalise("%time y = f(x)  # a magic\n!ls", names) == []


def test_answer_cells_and_their_questions(course):
    blank = json.loads((ROOT / "notebooks" / f"{sc.NAME}.ipynb").read_text())
    assert sim.answer_code(blank, course) == []                      # the course's own code only
    nb = sc.notebook(sc.honest_cells(sc.honest_choices(1)[0]))
    got = {c["cell"] - 1: c["question"] for c in sim.answer_code(nb, course)}
    want = {7: "q1", 8: "q1", 9: "q1", 10: "q1", 11: "q1", 18: "q3", 23: "q4"}
    if nb["cells"][15]["source"]:
        want[15] = "q2"
    assert got == want
    nb["cells"][19]["source"] = "x = 1"                              # the check cell, rewritten
    nb["cells"].append({"cell_type": "code", "source": "scratch = 2", "metadata": {}, "outputs": []})
    found = {c["cell"] - 1: c["question"] for c in sim.answer_code(nb, course)}
    assert found[19] == "q3" and found[len(nb["cells"]) - 1] == ""


def test_report_section_escapes_hostile_code(tmp_path, course):
    hostile = ('def Attention(q, k, v, causal=False):\n    s = "</pre><script>alert(1)</script>'
               + sim.END_MARK
               + '"\n    w = torch.softmax(q @ k.transpose(-2, -1), -1)\n    w = w.masked_fill(w < 0, 0)\n'
               '    return w @ v, w\n')
    rows = [{"file": f"=HYPERLINK(\"x\")<b>{i}</b>.ipynb", "id": "", "answer_code": [
        {"cell": 8, "question": "q1", "source": hostile + f"# student {i}\n"}]} for i in range(2)]
    flags = sim.compare(rows, course, None)
    assert len(flags) == 1 and flags[0].kind == "pair" and flags[0].score == 1.0
    section = sim.html_section(flags, sim.THRESHOLD, 0.1, 2, False)
    assert "<script" not in section and "<b>0" not in section and section.count(sim.END_MARK) == 1
    assert "class='hit'" in section
    report = tmp_path / "report.html"
    report.write_text(f"<html><body><p>before</p>{sim.PLACEHOLDER}<p>after</p></body></html>")
    sim.patch_report(report, section)
    sim.patch_report(report, section)                                # twice: replaced, not added
    text = report.read_text()
    assert text.count(sim.BEGIN_MARK) == 1 and "<p>after</p>" in text
    sim.write_csv(tmp_path, flags)
    with open(tmp_path / "similarity.csv", newline="") as f:
        row = next(csv.DictReader(f))
    assert row["file_a"].startswith("'=HYPERLINK")                   # no formula in a spreadsheet


# ---------------------------------------------------------------- the class, through course grade

@pytest.mark.slow
def test_class_of_37_through_course_grade(tmp_path, capsys):
    from autograder.grade import main as grade
    from course.cli import main as course_cli
    subs = tmp_path / "submissions"
    how, copies = sc.write_class(subs)
    out = tmp_path / "graded"
    assert grade([str(subs), "--assignment", sc.NAME, "--out", str(out), "--workers", "2",
                  "--no-progress"]) == 0
    with open(out / "grades.csv", newline="") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    assert len(rows) == 37
    wrong = {k: (r["grading_status"], r["percent_correct"]) for k, r in rows.items()
             if r["grading_status"] != "ok" or float(r["percent_correct"]) != 1.0}
    assert not wrong, f"every answer of the class is a correct answer: {wrong}"

    def flags():
        with open(out / "similarity.csv", newline="") as f:
            return list(csv.DictReader(f))

    found = flags()
    pairs = {frozenset((r["file_a"], r["file_b"])) for r in found if r["kind"] == "pair"}
    master = {r["file_a"] for r in found if r["kind"] == "master"}
    true = pairs & copies
    precision = len(true) / len(pairs) if pairs else 1.0
    recall = len(true) / len(copies)
    names = sorted(rows)
    independent = len(names) * (len(names) - 1) // 2 - len(copies)
    with capsys.disabled():
        print(f"\nsimilarity at threshold {sim.THRESHOLD}: {len(pairs)} pairs flagged, {len(true)} of "
              f"{len(copies)} copies found; precision {precision:.2f}, recall {recall:.2f}; "
              f"{len(pairs - copies)} of {independent} independent pairs flagged; master flags: "
              f"{sorted(master)}")
        for r in found:
            print(f"  {r['score']} {r['kind']}: {r['file_a']} / {r['file_b']} ({r['questions']})")
    assert recall == 1.0, f"copies not flagged: {sorted(map(sorted, copies - pairs))}"
    assert precision == 1.0, f"independent pairs flagged: {sorted(map(sorted, pairs - copies))}"
    assert master == {"master-renamed.ipynb"}

    report = (out / "report.html").read_text()
    assert report.count(sim.BEGIN_MARK) == 1 and "class='hit'" in report
    assert "Similar submissions (7)" in report
    for fb in (out / "feedback").glob("*.md"):                        # nothing in the students' feedback
        assert "simil" not in fb.read_text().lower()

    before = (out / "similarity.csv").read_bytes()
    (out / "similarity.csv").unlink()
    assert course_cli(["similarity", str(out)]) == 0                  # the verb, on the graded folder
    assert (out / "similarity.csv").read_bytes() == before           # the same flags, byte for byte
    assert (out / "report.html").read_text().count(sim.BEGIN_MARK) == 1
