"""Each exercise's own rules (autograder/exercise_rules.py, one hand-written rules.toml a notebook):
the course's own answer to an exercise is no way in, and what the text says to do by hand is done
by hand. The lists are read from the questions' text (every such phrase of a question is a list or
says why it is none); the course's solutions and the independent correct answers (the `ok_` mutants)
keep to them; the answers built to break them (autograder/shortcuts.py) are caught, statically, as
the judge reads them. That they cost their question on every route: tests/autograder/test_shortcuts.py
and tests/instructor/test_shortcut_routes.py."""
from __future__ import annotations

import json
import re

import nbformat
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder import exercise_rules, mutants, shortcuts
from autograder.assignment import ASSIGNMENTS, load
from autograder.notebook import read_notebook, setup_cell
from course.rules import Exercise, exercise_uses
from course.rules.exercise import _resolved
from instructor.masters import SOLUTIONS
from instructor.registry import notebooks

NAMES = notebooks()
BUILT = [n for n in NAMES if (mutants.BUILD / f"{n}-solution.ipynb").exists()]
# what a question's text says when it asks for something by hand (or sounds as if it did)
PHRASE = re.compile(r"by hand|pencil and paper|yourself|without|from (?:the )?mean|instead of|not code that",
                    re.IGNORECASE)
BY_HAND = [("04_head", "q2"), ("05_multihead", "q3"), ("06_block", "q1"), ("09_gpt", "q6")]


def prompts(notebook: str) -> dict[str, str]:
    """{question: its text} of the master's auto-graded questions (the markdown the student reads
    before the answer cell)."""
    cells = json.loads((SOLUTIONS / f"{notebook}.ipynb").read_text())["cells"]
    found, question, manual = {}, None, False
    for cell in cells:
        text = "".join(cell["source"])
        if cell["cell_type"] == "raw" and text.startswith("# BEGIN QUESTION"):
            question = re.search(r"name:\s*(\w+)", text).group(1)
            manual = re.search(r"manual:\s*true", text) is not None
        elif cell["cell_type"] == "raw" and text.startswith(("# BEGIN SOLUTION", "# END QUESTION")):
            question = None
        elif question and not manual and cell["cell_type"] == "markdown":
            found[question] = found.get(question, "") + text
    return found


def cells(nb: nbformat.NotebookNode, notebook: str) -> tuple[list[str], list[str]]:
    """The code cells as the judge reads them, and the blank notebook's."""
    given = load(notebook).given_code
    read, _ = read_notebook(nbformat.writes(nb).encode(), setup_cell(given))
    return [c["source"] for c in read if not c["ignore"]], given


def exercise(notebook: str, question: str) -> Exercise:
    rules = load(notebook).questions[[q.name for q in load(notebook).questions].index(question)].rules
    return Exercise(names=tuple(rules["names"]), pieces=tuple(rules["pieces"]), calls=tuple(rules["calls"]),
                    given=tuple(rules["given"]), methods=tuple(rules["methods"]))


def uses_in(nb: nbformat.NotebookNode, notebook: str, question: str) -> list[str]:
    code, given = cells(nb, notebook)
    return [u.shown for u in exercise_uses(code, exercise(notebook, question), given)]


@pytest.mark.parametrize("notebook", NAMES)
def test_every_phrase_of_a_question_is_a_list_or_says_why_not(notebook):
    tables = exercise_rules.read_file(ASSIGNMENTS / notebook)
    for q, text in prompts(notebook).items():
        table = tables.get(q, {})
        for phrase in {m.group(0).lower() for m in PHRASE.finditer(text)}:
            if any(phrase in f.lower() for f in table.get("from_text", [])):
                assert table.get("calls") or table.get("methods") or table.get("given"), (notebook, q, phrase)
            else:
                assert phrase in {k.lower() for k in table.get("not_rules", {})}, \
                    f"{notebook} {q} says {phrase!r}: give it a list in rules.toml, or say why it is none"
        for f in table.get("from_text", []):
            assert f.lower() in text.lower(), f"{notebook} {q}: {f!r} is not in the question's text"


@pytest.mark.parametrize("notebook", NAMES)
def test_every_rules_file_names_what_there_is(notebook):
    asg = load(notebook)                               # unknown keys and questions are refused there
    for q in asg.auto:
        for entry in q.rules.get("pieces", []) + q.rules.get("calls", []):
            assert _resolved(entry) is not None, f"{notebook} {q.name}: {entry} names nothing here"
        if q.rules and notebook in BUILT:
            sources = [c.source for c in mutants.solution_notebook(notebook).cells if c.cell_type == "code"]
            bound = set().union(*(shortcuts.degenerate.binds(s) for s in sources))
            assert set(q.rules["names"]) <= bound, (notebook, q.name)


@pytest.mark.parametrize("notebook", BUILT)
def test_the_solutions_and_the_independent_correct_answers_keep_to_the_rules(notebook):
    asg = load(notebook)
    ruled = [q.name for q in asg.auto if q.rules]
    for q in ruled:
        assert uses_in(mutants.solution_notebook(notebook), notebook, q) == [], (notebook, q)
    for m in mutants.load_mutants(notebook):
        if m.expect == "pass" and m.question in ruled:
            assert uses_in(mutants.mutant_notebook(m), notebook, m.question) == [], m.name


@pytest.mark.parametrize("notebook", [n for n in BUILT if exercise_rules.read_file(ASSIGNMENTS / n)])
def test_every_shortcut_answer_is_caught_as_the_judge_reads_it(notebook):
    from autograder.degenerate import degenerate_notebook
    rules = {q.name: q.rules for q in load(notebook).auto}
    for d in shortcuts.shortcuts(notebook):
        code, given = cells(degenerate_notebook(d), notebook)
        said = exercise_rules.verdict(code, given, rules[d.question], d.question)
        assert said and said.startswith(exercise_rules.MARK), f"{notebook} {d.question} {d.name}"


@pytest.mark.parametrize("notebook, question", BY_HAND)
def test_a_by_hand_exercise_lists_what_it_may_not_call_and_each_is_caught(notebook, question):
    """Each entry of the list is used by an answer of the suite, which the rules catch; the
    solution, by hand, is not."""
    if notebook not in BUILT:
        pytest.skip(f"{notebook} is not built")
    from autograder.degenerate import degenerate_notebook
    table = exercise_rules.read_file(ASSIGNMENTS / notebook)[question]
    assert table["from_text"] and (table.get("calls") or table.get("methods"))
    answers = [d for d in shortcuts.shortcuts(notebook) if d.question == question]
    assert answers
    ex = exercise(notebook, question)
    used = set()
    for d in answers:
        code, given = cells(degenerate_notebook(d), notebook)
        found = exercise_uses(code, ex, given)
        assert found, d.name
        used |= {u.entry for u in found}
    if notebook == "06_block":              # every one of PyTorch's norms the list names
        assert set(table["calls"]) <= used, set(table["calls"]) - used
    else:
        assert used & set(table["methods"]) and used & set(table["given"])


def test_each_layer_norm_shortcut_is_a_layer_norm():
    """06 q1's shortcuts are right answers (each would earn the question's points, values and all):
    what takes them away is the rule."""
    torch.manual_seed(0)
    x = 2 * torch.randn(3, 5, 7) + 1
    want = (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True, unbiased=False)
    for d in shortcuts.shortcuts("06_block"):
        if d.question == "q1":
            env = {"torch": torch, "nn": nn, "F": F, "norm": nn.LayerNorm(7)}
            exec(compile(d.code, d.name, "exec"), env)
            assert torch.allclose(env["NormalizeByHand"](x), want, atol=1e-4), d.name


def test_a_piece_counts_however_it_is_reached():
    block = Exercise(names=("Block",), pieces=("course.tinydenoiser",))
    ways = {
        "subclass": "from course.tinydenoiser import DenoiserBlock\nclass Block(DenoiserBlock):\n    pass",
        "module": "import course.tinydenoiser as td\nclass Block(td.DenoiserBlock):\n    pass",
        "package": "import course\nclass Block(course.tinydenoiser.DenoiserBlock):\n    pass",
        "alias": "from course.tinydenoiser import DenoiserBlock as D\nB = D\nclass Block(B):\n    pass",
        "star": "from course.tinydenoiser import *\nclass Block(DenoiserBlock):\n    pass",
        "getattr": "import course.tinydenoiser as td\nclass Block(getattr(td, 'DenoiserBlock')):\n    pass",
        "copy": ("from course import tinydenoiser\n"
                 "class Block(nn.Module):\n    forward = tinydenoiser.DenoiserBlock.forward"),
        "wrapper": ("from course.tinydenoiser import TinyDenoiser\nnet = TinyDenoiser(10)",
                    "def Block(dim, heads):\n    return net.blocks[0]"),
    }
    for way, code in ways.items():
        assert exercise_uses(code if isinstance(code, tuple) else [code], block), way
    honest = "from course.tinydenoiser import Rotate\nclass Block(nn.Module):\n    def forward(self, x):\n" \
             "        return x + self.mlp(self.norm2(x))"
    assert exercise_uses([honest], block) == []


def test_a_name_of_the_notebook_counts_as_a_chain_an_alias_or_a_value():
    block = Exercise(names=("Block",), given=("page.Block",))
    for code in ("class Block(page.Block):\n    pass", "B = page.Block\nclass Block(B):\n    pass",
                 "p = page\nclass Block(p.Block):\n    pass",
                 "class Block(getattr(page, 'Block')):\n    pass"):
        assert exercise_uses([code], block), code
    assert exercise_uses(["class Block(nn.Module):\n    def f(self, q, k, v):\n"
                          "        return page.Attention(q, k, v)"], block) == []
    count = Exercise(names=("head_params",), given=("Head",), methods=("numel",),
                     calls=("torch.nn",))
    assert exercise_uses(["head_params = 3 * 32 * 8"], count) == []
    for code in ("head_params = sum(p.numel() for p in h.parameters())",
                 "head = Head(32, 8)\nhead_params = 3 * head.Q.weight.shape[0] * 32",
                 "head_params = 3 * nn.Linear(32, 8, bias=False).weight.shape[0] * 32",
                 "head_params = sum(getattr(p, 'numel')() for p in h)"):
        assert exercise_uses([code], count), code


def test_code_that_hides_what_it_uses_breaks_the_rules_too():
    """What the reading cannot follow (an attribute by a computed name in the graded code, code that
    changes it from afar anywhere) cannot be checked against the list: the question is lost, with a
    message that says why; a method's own getattr(self, ...) is fine."""
    rules = {"names": ["Block"], "hint": "q4 asks you to write the Block yourself; {name} is the course's",
             "pieces": ["course.tinydenoiser"], "calls": [], "given": [], "methods": []}
    honest = "class Block(nn.Module):\n    def forward(self, x):\n        return getattr(self, 'mlp' + '')(x)"
    assert exercise_rules.verdict([honest], None, rules, "q4") is None
    for code in ("import course\nB = getattr(course, 'tiny' + 'denoiser').DenoiserBlock\n"
                 "class Block(B):\n    pass",
                 "class Block(nn.Module):\n    pass\nglobals()['Block'] = 3",
                 "class Block(nn.Module):\n    pass\nx = vars(torch)",
                 "import functools\nfind = functools.partial(getattr, course)\n"
                 "class Block(find('tiny' + 'denoiser').Base):\n    pass",
                 "class Block(nn.Module):\n    def f(self):\n        G = nn\n        return G.LayerNorm",
                 "class Block([c for c in nn.Module.__subclasses__() if c.__name__ == 'DenoiserBlock'][0]):\n"
                 "    pass",
                 "class Block(nn.Module):\n    pass\nnet = torch.load('f.pt', weights_only=True)"):
        said = exercise_rules.verdict([code], None, rules, "q4")
        assert said and said.startswith(f"{exercise_rules.MARK}the grader cannot tell what q4's code"), code


def test_a_piece_handed_to_a_function_or_shared_by_another_name_counts():
    """A forbidden piece stored through a function's argument (a default, a keyword, a
    dict a helper fills) or through a second name for the same dict is reached all the same."""
    norm = Exercise(names=("NormalizeByHand",), calls=("torch.nn.functional.layer_norm",))
    block = Exercise(names=("Block",), pieces=("course.tinydenoiser",))
    use = "def NormalizeByHand(x):\n    return helpers['norm'](x, x.shape[-1:])\n"
    ways = {
        "helper fills a dict": use + "def remember(table, **named):\n    table.update(named)\n"
                                     "helpers = {}\nremember(helpers, norm=F.layer_norm)",
        "helper stores by key": use + "def keep(table, piece):\n    table['norm'] = piece\n"
                                      "helpers = {}\nkeep(helpers, F.layer_norm)",
        "a lambda": use + "keep = lambda t, p: t.update(norm=p)\nhelpers = {}\nkeep(helpers, F.layer_norm)",
        "a method": use + "class Keeper:\n    def keep(self, t, p):\n        t['norm'] = p\n"
                          "helpers = {}\nKeeper().keep(helpers, F.layer_norm)",
        "dict.update": use + "helpers = {}\ndict.update(helpers, norm=F.layer_norm)",
        "a name for dict.update": use + "put = dict.update\nhelpers = {}\nput(helpers, norm=F.layer_norm)",
        "operator.setitem": use + "import operator\nhelpers = {}\n"
                                  "operator.setitem(helpers, 'norm', F.layer_norm)",
        "a second name": use + "helpers = {}\nnotes = helpers\nnotes['norm'] = F.layer_norm",
        "a default argument": "def NormalizeByHand(x, by=F.layer_norm):\n    return by(x, x.shape[-1:])",
        "a helper called later": use + "helpers = {}\ndef setup():\n    remember(helpers, F.layer_norm)\n"
                                       "def remember(t, p):\n    t['norm'] = p\nsetup()",
    }
    for way, code in ways.items():
        assert exercise_uses([code], norm), way
    assert exercise_uses(["from course.tinydenoiser import DenoiserBlock as ref\n"
                          "class Block(nn.Module):\n    def forward(self, x):\n"
                          "        return parts['forward'](self, x)\n"
                          "def keep(table, piece):\n    table['forward'] = piece.forward\n"
                          "parts = {}\nkeep(parts, ref)"], block)
    honest = ("def NormalizeByHand(x):\n    mean = x.mean(-1, keepdim=True)\n"
              "    return (x - mean) / x.std(-1, keepdim=True, unbiased=False)\n"
              "x = torch.randn(4, 6)\n"
              "print(torch.allclose(NormalizeByHand(x), F.layer_norm(x, (6,)), atol=1e-5))\n"
              "results = {}\nresults['mine'] = NormalizeByHand(x)\nresults['torch'] = F.layer_norm(x, (6,))")
    assert exercise_uses([honest], norm) == []
