"""Similarity flags (autograder/similarity.py): what counts as an answer, what normalising hides, what
the report shows of hostile code, and a class of 37 submissions of 08_causal graded through the real
`course grade`. A class of 37 submissions of 08_causal (30 honest students built from independently
written answers, six disguised copies, a disguised copy of the master) is compared as course grade
keeps it: every copy flagged, no independent pair flagged; six of them go through the real
commands (`course grade`, then `course similarity DIR`)."""
import csv
import itertools
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from autograder import similarity as sim
from autograder import similarity_scoring as scoring
from autograder.assignment import load
from autograder.degenerate import degenerates
from autograder.mutants import load_mutants
from benchmarks import similarity_class as sc

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def course():
    return load(sc.NAME).given_code


def _lines(src, names):
    return sorted(text for text, _a, _b in sim.normalise(src, names))


@pytest.mark.parametrize("disguise", ["rename", "reorder", "recomment", "swap_matmul", "swap_calls"])
def test_normalising_hides_each_disguise(disguise, course):
    """Every answer of the class, disguised, normalises to the same lines (in some order)."""
    names = sim.CourseNames.of(course)
    f = getattr(sc, disguise)
    for piece, answers in sc.ANSWERS.items():
        for src in answers:
            if src.strip():
                assert _lines(f(src), names) == _lines(src, names), (piece, disguise, src)


@pytest.mark.parametrize("a, b", [
    ("w = x.softmax(-1)", "w = torch.softmax(x, dim=-1)"),
    ("w = torch.nn.functional.softmax(x, -1)", "w = x.softmax(-1)"),
    ("w = torch.softmax(input=x, dim=-1)", "w = F.softmax(x, -1)"),
    ("y = x.view(B, T, C)", "y = x.reshape(B, T, C)"),
    ("y = x.transpose(1, 2).contiguous().view(B, T, C)", "y = torch.transpose(x, 1, 2).reshape(B, T, C)"),
    ("y = x.view_as(z)", "y = x.reshape_as(z)"),
    ("n = x.size()[-1]", "n = x.shape[-1]"),
    ("def f(x, m):\n    x.masked_fill_(m, 0)\n    return x",
     "def f(x, m):\n    x = torch.masked_fill(x, m, 0)\n    return x"),
])
def test_equivalent_tensor_calls_normalise_alike(a, b, course):
    """A copy whose tensor calls were rewritten (method form to function form, one reshape for
    another) normalises as the original does, so it is not missed."""
    names = sim.CourseNames.of(course)
    assert _lines(a, names) == _lines(b, names)


def test_normalising_keeps_what_differs(course):
    names = sim.CourseNames.of(course)
    a = "def Attention(q, k, v, causal=False):\n    w = torch.softmax(q @ k.mT, -1)\n    return w @ v, w\n"
    b = "def Attention(q, k, v, causal=False):\n    w = torch.sigmoid(q @ k.mT)\n    return w @ v, w\n"
    assert _lines(a, names) != _lines(b, names)
    assert _lines("y = np.mean(x)", names) != _lines("y = x.mean()", names)     # numpy's, not torch's
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
    # an answer made to look like the setup cell is still an answer: only the first is the course's
    # (the grader runs the later ones as the student's)
    first = nb["cells"][7]["source"]
    nb["cells"][7]["source"] = "#@title My answer\n# GIVEN: setup.\n" + first
    assert 7 in {c["cell"] - 1 for c in sim.answer_code(nb, course)}


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


# ---------------------------------------------------------------- the class

def _found(flags):
    pairs = {frozenset((f.a.file, f.b.file)) for f in flags if f.kind == "pair"}
    master = {f.a.file for f in flags if f.kind == "master"}
    return pairs, master


def test_class_of_37_every_copy_flagged_and_no_independent_pair(capsys, course):
    """The answer cells as course grade keeps them (results/<stem>.json), compared as the hook does."""
    books, _how, copies = sc.build_class()
    flags = sim.compare(sc.answer_rows(books), course, sim.master_answers(sc.NAME))
    pairs, master = _found(flags)
    true = pairs & copies
    precision = len(true) / len(pairs) if pairs else 1.0
    recall = len(true) / len(copies)
    independent = len(books) * (len(books) - 1) // 2 - len(copies)
    with capsys.disabled():
        print(f"\nsimilarity at threshold {sim.THRESHOLD}: {len(pairs)} pairs flagged, {len(true)} of "
              f"{len(copies)} copies found; precision {precision:.2f}, recall {recall:.2f}; "
              f"{len(pairs - copies)} of {independent} independent pairs flagged; master flags: "
              f"{sorted(master)}")
    assert recall == 1.0, f"copies not flagged: {sorted(map(sorted, copies - pairs))}"
    assert precision == 1.0, f"independent pairs flagged: {sorted(map(sorted, pairs - copies))}"
    assert master == {"master-renamed.ipynb"}


@pytest.mark.parametrize("copied", ["a student", "the master"])
def test_seven_identical_notebooks_of_thirteen_are_all_flagged(copied, course, tmp_path):
    """Seven of thirteen wrote byte-identical answers, so their fingerprints are held by half the
    class, which must not make them count for nothing. Each pair of identical notebooks is
    flagged, and, when they are the master's answers, each
    beside the master; the six honest students still are not."""
    choices = sc.honest_choices(7)
    books = {f"honest{i:02d}.ipynb": sc.notebook(sc.honest_cells(c)) for i, c in enumerate(choices[1:])}
    same = sc.notebook(sc.master_cells() if copied == "the master" else sc.honest_cells(choices[0]))
    copies = {f"same{i}.ipynb" for i in range(7)}
    books.update({name: same for name in copies})
    flags = sim.compare(sc.answer_rows(books), course, sim.master_answers(sc.NAME))
    pairs, master = _found(flags)
    assert pairs == {frozenset((a, b)) for a in copies for b in copies if a < b}
    assert master == (copies if copied == "the master" else set())
    assert all(f.identical and f.score == 1.0 for f in flags)
    section = sim.html_section(flags, sim.THRESHOLD, 0.1, len(books), True, shown=2)
    assert "identical answers" in section and "class='hit'" in section
    sim.write_csv(tmp_path, flags)
    assert (tmp_path / "similarity.csv").read_text().count("\n") == 1 + len(flags)


# ---------------------------------------------------------------- the index against every pair

def _exhaustive_pairs(subs, master, threshold):
    """The pairwise pass the index replaced, kept as the reference: every pair of the class scored
    from Python sets, the class's common fingerprints and the master's removed as it removed them."""
    raw = [{q: set(u.hashes.tolist()) for q, u in s.units.items()} for s in subs]
    held = Counter((q, h) for r in raw for q, hs in r.items() for h in hs)
    answered = Counter(q for r in raw for q in r)
    common = {k for k, n in held.items() if n >= max(sim.COMMON_MIN, sim.COMMON * answered[k[0]])}
    theirs = {q: set(u.hashes.tolist()) for q, u in master.units.items()} if master else {}
    kept = [{q: {h for h in hs if (q, h) not in common and h not in theirs.get(q, ())} for q, hs in r.items()}
            for r in raw]
    sizes = [{q: len(hs) for q, hs in k.items()} for k in kept]
    flags = []
    for i, j in itertools.combinations(range(len(subs)), 2):
        shared = {q: len(kept[i][q] & kept[j][q]) for q in set(kept[i]) & set(kept[j])}
        f = scoring.score("pair", subs[i], subs[j], sizes[i], sizes[j], shared, threshold)
        if f:
            flags.append(f)
    return flags


def _class_of_answers(n, seed):
    """A class of ``n`` from the project's own answers: honest students drawing each piece from the
    correct answers (no limit on what two share: pairs land on both sides of the threshold), pieces
    swapped for the mutation suite's mutants and for degenerate answers, blank notebooks, renamed
    and disguised copies, byte-identical copies and copies of the master."""
    rng = random.Random(seed)
    swaps = [(m.replaces, m.code) for m in load_mutants(sc.NAME)]
    swaps += [({"causal_same": "q3"}.get(d.replaces, d.replaces), d.code) for d in degenerates(sc.NAME)]
    disguises = list(sc.DISGUISES.values())
    books, made = {}, []
    for i in range(n):
        kind = i % 10
        if kind == 9 and made:                   # a disguised copy of an earlier student
            cells = sc.disguise(rng.choice(made), disguises[rng.randrange(len(disguises))],
                                shuffle_cells=rng.random() < 0.3)
        elif kind == 8 and made:                 # a byte-identical copy
            cells = dict(rng.choice(made))
        elif kind == 7 and i % 20 == 7:          # the master's answers, renamed
            cells = sc.disguise(sc.master_cells(), [sc.rename, sc.recomment])
        elif kind == 6 and i % 50 == 6:          # a blank notebook
            cells = {}
        else:
            cells = sc.honest_cells({p: rng.randrange(len(sc.ANSWERS[p])) for p in sc.PIECES})
            for piece, code in rng.sample(swaps, rng.choice((0, 0, 1, 2))):
                if piece in sc.CELLS:
                    cells[piece] = code
            made.append(cells)
        books[f"s{i:03d}.ipynb"] = sc.notebook(cells)
    return books


def _key(flags):
    return [(f.kind, f.a.file, f.b.file, f.score, f.whole, f.questions, f.shared, f.identical) for f in flags]


@pytest.mark.parametrize("which", ["the class of 37", "a class of 200"])
def test_the_index_flags_what_every_pair_flagged(which, course):
    """The indexed pass (only pairs that share a rare fingerprint are scored) flags exactly what
    scoring every pair flagged, at the default threshold and others, on classes of the project's
    own answers: same pairs, scores, questions, CSV and report section."""
    books = sc.build_class()[0] if which == "the class of 37" else _class_of_answers(200, seed=3)
    rows = sc.answer_rows(books)
    master = sim.master_answers(sc.NAME)
    subs, master_sub = sim.prepare(rows, course, master)
    for threshold in (sim.THRESHOLD, 0.3, 0.9, 0.0):
        others = scoring.master_flags(subs, master_sub, threshold)
        every = scoring.identical(subs, master_sub, others + _exhaustive_pairs(subs, master_sub, threshold))
        indexed = scoring.identical(subs, master_sub, others + scoring.pair_flags(subs, threshold))
        for flags in (every, indexed):
            flags.sort(key=lambda f: (-f.score, f.kind, f.a.file, f.b.file))
        assert _key(indexed) == _key(every), threshold
        assert sim.csv_text(indexed) == sim.csv_text(every)
        assert sim.html_section(indexed, threshold, 1.0, len(rows), True, shown=5) == \
            sim.html_section(every, threshold, 1.0, len(rows), True, shown=5)
        if threshold == sim.THRESHOLD:
            assert _key(sim.compare(rows, course, master)) == _key(every)
            assert sum(f.kind == "pair" for f in every) >= 5, "the class has pairs to find"


@pytest.mark.e2e
def test_a_class_through_course_grade_and_course_similarity(tmp_path):
    """Six of the class through the real commands: three honest students, one of them copied
    (renamed), the master copied, and a partial copy's source: the flags in similarity.csv and the
    report, nothing in grades or feedback, and `course similarity DIR` writes the same again."""
    from autograder.grade import main as grade
    from instructor.cli import main as course_cli
    books, _how, copies = sc.build_class()
    copy = next(n for n in books if n.startswith("copy0-"))
    source = next(iter(next(p for p in copies if copy in p) - {copy}))
    chosen = {copy, source, "honest00.ipynb", "honest02.ipynb", "honest05.ipynb", "master-renamed.ipynb"}
    subs = tmp_path / "submissions"
    subs.mkdir()
    for name in chosen:
        (subs / name).write_text(json.dumps(books[name], indent=1), encoding="utf-8")
    out = tmp_path / "graded"
    assert grade([str(subs), "--assignment", sc.NAME, "--out", str(out), "--workers", "2",
                  "--no-progress"]) == 0
    with open(out / "grades.csv", newline="") as f:
        rows = {r["file"]: r for r in csv.DictReader(f)}
    assert len(rows) == len(chosen)
    wrong = {k: (r["grading_status"], r["percent_correct"]) for k, r in rows.items()
             if r["grading_status"] != "ok" or float(r["percent_correct"]) != 1.0}
    assert not wrong, f"every answer of the class is a correct answer: {wrong}"

    with open(out / "similarity.csv", newline="") as f:
        found = list(csv.DictReader(f))
    pairs = {frozenset((r["file_a"], r["file_b"])) for r in found if r["kind"] == "pair"}
    assert pairs == {frozenset((copy, source))}
    assert {r["file_a"] for r in found if r["kind"] == "master"} == {"master-renamed.ipynb"}
    report = (out / "report.html").read_text()
    assert report.count(sim.BEGIN_MARK) == 1 and "class='hit'" in report
    assert "Similar submissions (2)" in report
    for fb in (out / "feedback").glob("*.md"):                        # nothing in the students' feedback
        assert "simil" not in fb.read_text().lower()

    before = (out / "similarity.csv").read_bytes()
    (out / "similarity.csv").unlink()
    assert course_cli(["similarity", str(out)]) == 0                  # the verb, on the graded folder
    assert (out / "similarity.csv").read_bytes() == before           # the same flags, byte for byte
    assert (out / "report.html").read_text().count(sim.BEGIN_MARK) == 1
