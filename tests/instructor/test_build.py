"""course build's pieces: answers as they read, points, questions, and what later notebooks get."""
import re
from pathlib import Path

import nbformat
import pytest

from instructor import build, masters

ROOT = build.ROOT

SOLUTION_CELL = """\
fig = 1
# BEGIN PROMPT
def Attention(q, k, v):
    ...
# END PROMPT
# BEGIN SOLUTION NO PROMPT
def Attention(q, k, v):
    return q, k  # SOLUTION
# END SOLUTION
"""


def test_answer_code_drops_prompts_and_markers():
    assert masters.answer_code(SOLUTION_CELL) == "fig = 1\ndef Attention(q, k, v):\n    return q, k"


def test_questions_and_points_line():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q1\npoints: 3"),
                nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q2\npoints: [1, 1.5]"),
                nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q3\npoints: 2\nmanual: true")]
    qs = build.questions(nb)
    assert [q["name"] for q in qs] == ["q1", "q2", "q3"] and qs[2]["manual"]
    assert "**7.5 points**: 5.5 checked by the autograder, 2 read by your instructor" in \
        build._points_line(qs)


def test_requirements_and_environment_pin_the_same_versions():
    pins = dict(line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    env = (ROOT / "environment.yml").read_text()
    conda = dict(re.findall(r"^\s*- ([\w-]+)==([\w.]+)$", env, re.MULTILINE))
    assert pins == conda
    assert pins["torch"] == "2.13.0" and pins["otter-grader"] == "7.0.0"


@pytest.mark.parametrize("name", [n for n in build.masters() if n != build.registry.notebooks()[0]])
def test_later_notebooks_give_the_earlier_answers(name):
    """Every reference answer of an earlier master is GIVEN in this student notebook."""
    student = ROOT / "notebooks" / f"{name}.ipynb"
    if not student.exists():
        pytest.skip("not built")
    cells = nbformat.read(student, as_version=4).cells
    given = next(c.source for c in cells if "given-earlier" in c.metadata.get("tags", []))
    assert given.startswith("# GIVEN")
    for code in build.given_pieces(name):
        assert code in given


@pytest.mark.parametrize("name", build.masters())
def test_master_layout(name):
    """The cells the build owns are there, the points are stated, and the config is right."""
    nb = build.read_master(name)
    tags = [t for c in nb.cells for t in c.metadata.get("tags", [])]
    assert "setup" in tags and "points" in tags
    assert ("given-earlier" in tags) == (name != build.registry.notebooks()[0])
    config = nb.cells[0].source
    assert nb.cells[0].cell_type == "raw" and f"name: {name}" in config
    assert build.questions(nb), "a notebook without questions"
    setup = next(c.source for c in nb.cells if "setup" in c.metadata.get("tags", []))
    assert f'NOTEBOOK = "{name}"' in setup
    # Colab shows the cell collapsed under its title; the graders know it by the mark after it
    assert setup.startswith('#@title Setup (run this first) { display-mode: "form" }\n# GIVEN: setup.')


@pytest.mark.parametrize("name", build.masters())
def test_hand_graded_questions_end_with_what_full_marks_are(name):
    """The text of every hand-graded question ends with one `**Full marks:**` paragraph: what a
    full-marks answer contains, in the student's words."""
    from autograder import master_format as mf
    prompts: dict[str, str] = {}
    answered: set[str] = set()
    for place in mf.walk(build.read_master(name).cells):
        q = place.question
        if q is None or not q.manual:
            continue
        if place.region == "solution":
            answered.add(q.name)
        elif place.region is None and q.name not in answered and place.cell.cell_type == "markdown":
            prompts[q.name] = place.cell.source                 # the last text before the answer
    manual = [q.name for q in mf.questions(build.read_master(name).cells) if q.manual]
    assert sorted(prompts) == sorted(manual), "a hand-graded question without its text"
    for q, text in prompts.items():
        last = text.rstrip().split("\n\n")[-1]
        assert last.startswith("**Full marks:** ") and last.count("**Full marks:**") == 1, \
            f"{name} {q}: its text should end with one '**Full marks:** ...' paragraph"


@pytest.mark.parametrize("name", build.masters())
def test_every_answer_cell_says_what_goes_in_it(name):
    """No answer cell of the student notebook is empty: a code cell whose answer is all solution
    shows the master's `# BEGIN PROMPT` comment (`# Your answer to Q8, part 2 of 3: ...`), a markdown
    one Otter's "Type your answer here"."""
    student = ROOT / "notebooks" / f"{name}.ipynb"
    if not student.exists():
        pytest.skip("not built")
    empty = [i for i, cell in enumerate(nbformat.read(student, as_version=4).cells)
             if "otter_answer_cell" in cell.metadata.get("tags", []) and not cell.source.strip()]
    assert empty == [], f"{name}: answer cells {empty} are empty: say what goes in them"


def test_reference_namespace_has_the_solutions_classes():
    names = build.masters()
    if "07_my_transformer" not in names:
        pytest.skip("07 not written yet")
    ns = build.reference_namespace("07_my_transformer")
    net = ns["MyTransformer"](2002)
    assert sum(p.numel() for p in net.parameters()) == 1_314_514


def test_student_notebooks_have_no_outputs():
    for path in sorted(Path(ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name
