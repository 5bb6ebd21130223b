"""The public checks that say right or wrong about a short answer without holding it: they compare the
answer with the student's own objects (the shape of their own ``table[x]``, the count of their own
network, the entropy of their own dictionary) or check a property every right answer has. Run here
in-process on the public test files a release ships (``notebooks/tests/NN_name/qN.py``): the
solution's answers and the correct alternatives pass, the typical misunderstandings fail, and a
check leaves the notebook's random numbers as it found them (fast)."""
from __future__ import annotations

import contextlib
import importlib.util
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from course import handles

ROOT = Path(__file__).resolve().parents[2]
PRELUDE = ("import math, numpy as np, torch, torch.nn as nn, torch.nn.functional as F\n"
           "from course import *\n")

HEAD = '''
class Head(nn.Module):
    def __init__(self, dim, head_dim, bias=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=bias)
        self.K = nn.Linear(dim, head_dim, bias=bias)
        self.V = nn.Linear(dim, head_dim, bias=bias)

    def forward(self, x):
        q, k, v = self.Q(x), self.K(x), self.V(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v
'''
MULTI = HEAD + '''
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = HEADS([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim, bias=MIX_BIAS)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
'''


def public_check(notebook: str, question: str, name: str):
    """The test function ``name`` of the public test file that the release ships."""
    path = ROOT / "notebooks" / "tests" / notebook / f"{question}.py"
    if not path.exists():
        pytest.skip(f"run `course build {notebook}` first")
    spec = importlib.util.spec_from_file_location(f"public_{notebook}_{question}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    case = getattr(module, name)
    assert case.points == 0 and not case.hidden, f"{name} should be a public check of 0 points"
    return case.test_func


@contextlib.contextmanager
def notebook(code: str) -> Iterator[dict]:
    """Run ``code`` as a notebook would, in this process; the checks reach its names through handles."""
    env: dict = {"__name__": "__main__"}
    source = PRELUDE + code
    exec(compile(source, "<cell 1>", "exec"), env)
    transport = handles.LocalTransport(env)
    transport.cells = lambda obj=None: [source]
    handles.use(transport)
    try:
        yield env
    finally:
        handles.use(None)


def passes(check, code: str) -> bool:
    """Whether ``check`` passes on the notebook ``code``; it must leave torch's random numbers alone."""
    with notebook(code) as env:
        state = torch.get_rng_state()
        try:
            check(*[env[p] for p in inspect.signature(check).parameters])
        except (AssertionError, handles.StudentError):
            return False
        finally:
            assert torch.equal(torch.get_rng_state(), state), "the check moved the random numbers"
    return True


def correct(notebook: str, stem: str) -> str:
    return (ROOT / "autograder" / "assignments" / notebook / "correct" / f"{stem}.py").read_text()


# ---------------------------------------------------------------- 01: shapes, rows, the entropy

Q1 = 'table = torch.randn(len(vocab), 8)\nx = Encode("the cat is the box")\n'


@pytest.mark.parametrize("answer, ok", [("table[x].shape", True), ("(5, 8)", True), ("[5, 8]", True),
                                        ("(5,)", False), ("(8, 5)", False), ("table.shape", False)])
def test_rows_shape_is_that_of_the_students_own_rows(answer, ok):
    check = public_check("01_no_talking", "q1", "test_shape_of_your_rows")
    assert passes(check, Q1 + f"rows_shape = {answer}\n") is ok


@pytest.mark.parametrize("answer, ok", [("[0, 3]", True), ("[3, 0]", True), ("[]", True), ("[3]", False),
                                        ("[0, 0, 3]", False)])
def test_identical_rows_never_stand_alone(answer, ok):
    check = public_check("01_no_talking", "q1", "test_identical_rows_come_together")
    assert passes(check, Q1 + f"identical_rows = {answer}\n") is ok


@pytest.mark.parametrize("answer, ok", [("embed(x_batch).shape", True), ("(64, 4, 8)", True),
                                        ("(64, 8)", False), ("(64, 4)", False), ("(64, 4, 14)", False)])
def test_batch_shape_is_that_of_the_students_own_embedding(answer, ok):
    check = public_check("01_no_talking", "q4", "test_shape_of_your_batch")
    code = ("embed = nn.Embedding(len(vocab), 8)\nx_batch = torch.stack([SamplePInit() for b in range(64)])\n"
            f"batch_shape = {answer}\n")
    assert passes(check, code) is ok


SOLUTION_Q9 = '''
word_frequencies = {"the": 0.25, "is": 0.25, "cat": 0.2, "alive": 0.2, "box": 0.05, "empty": 0.05}
frequency_entropy = -sum(p * math.log(p) for p in word_frequencies.values())
no_talking_loss = 4 * frequency_entropy
'''


@pytest.mark.parametrize("code", [SOLUTION_Q9, correct("01_no_talking", "q9_counts"),
                                  correct("01_no_talking", "q9_from_sentences"),
                                  SOLUTION_Q9 + "frequency_entropy, no_talking_loss = 1.64, 6.55\n",
                                  # wrong frequencies, but the entropy and the loss follow from them
                                  SOLUTION_Q9.replace('"box": 0.05, "empty": 0.05', '"box": 0.1')])
def test_entropy_and_loss_that_follow_from_the_students_own_answers_pass(code):
    for name in ("test_entropy_of_your_frequencies", "test_loss_from_your_entropy"):
        assert passes(public_check("01_no_talking", "q9", name), code), name


def test_a_wrong_log_or_a_missing_factor_four_fails():
    entropy = public_check("01_no_talking", "q9", "test_entropy_of_your_frequencies")
    loss = public_check("01_no_talking", "q9", "test_loss_from_your_entropy")
    assert not passes(entropy, SOLUTION_Q9.replace("math.log(p)", "math.log2(p)"))
    assert not passes(loss, SOLUTION_Q9.replace("4 * frequency_entropy", "frequency_entropy"))


# ---------------------------------------------------------------- 04, 05, 07: counts of own networks

@pytest.mark.parametrize("head, answer, ok", [("", "3 * 32 * 8", True), ("", "3 * (32 * 8 + 8)", False),
                                              ("", "32 * 8", False),
                                              # a Head with biases: the count agrees with it (Q1 costs)
                                              ("bias=True", "3 * (32 * 8 + 8)", True)])
def test_head_count_agrees_with_the_students_own_head(head, answer, ok):
    check = public_check("04_head", "q2", "test_count_of_your_head")
    code = HEAD.replace("bias=False", head or "bias=False") + f"head_params = {answer}\n"
    assert passes(check, code) is ok


def _multi(mix_bias: bool = True, heads: str = "nn.ModuleList") -> str:
    return MULTI.replace("MIX_BIAS", str(mix_bias)).replace("HEADS", heads) + "multi = MultiHead(32, 4)\n"


@pytest.mark.parametrize("code, ok", [
    (_multi() + "multi_params = 4 * 3 * 32 * 8 + 32 * 32 + 32\n"
     "multi_count = sum(p.numel() for p in multi.parameters())\n", True),
    (_multi() + correct("05_multihead", "q3_named_sizes") + correct("05_multihead", "q3_count_loop"), True),
    (_multi() + "multi_params = 4 * 3 * 32 * 8 + 32 * 32\nmulti_count = 4128\n", False),     # no bias
    (_multi() + "multi_params = 4128\nmulti_count = len(list(multi.parameters()))\n", False),
    (_multi(mix_bias=False) + "multi_params = 4128\nmulti_count = 4096\n", False),   # MultiHead wrong
    # the given Head changed (biases): the MultiHead and both counts are still right
    (_multi().replace("head_dim, bias=False)", "head_dim, bias=True)") + "multi_params = 4128\n"
     "multi_count = sum(p.numel() for p in multi.parameters())\n", True),
])
def test_multihead_counts_agree_with_the_students_own_multi(code, ok):
    assert passes(public_check("05_multihead", "q3", "test_counts_agree"), code) is ok


@pytest.mark.parametrize("code, ok", [
    (MULTI.replace("class MultiHead", "class ListMultiHead").replace("HEADS", "").replace("MIX_BIAS", "True")
     + "list_params = sum(p.numel() for p in ListMultiHead(32, 4).parameters())\n", True),
    (HEAD + correct("05_multihead", "q4_list_params"), True),
    (HEAD + correct("05_multihead", "q4_list_params") + "list_params = 4128\n", False),   # by hand, heads too
])
def test_list_count_is_that_of_the_students_own_list_version(code, ok):
    assert passes(public_check("05_multihead", "q4", "test_count_of_your_list_version"), code) is ok


@pytest.mark.parametrize("answer, ok", [("sum(p.numel() for p in big.parameters())", True), ("27", False),
                                        ("len(list(big.parameters()))", False)])
def test_n_params_is_the_count_of_the_students_own_big(answer, ok):
    check = public_check("07_my_transformer", "q2", "test_count_of_your_big")
    code = f"big = nn.Sequential(nn.Linear(8, 3), nn.Linear(3, 2, bias=False))\nn_params = {answer}\n"
    assert passes(check, code) is ok


# ---------------------------------------------------------------- 08: which positions stay the same

@pytest.mark.parametrize("same, other, ok", [
    ([0, 1, 2], [], True),
    ([0, 1, 2], [0, 1, 2], True), ([], [], True), ([1, 2], [], True),   # a broken network's own may do
    ([3], [0, 1, 2, 3], False),                              # the positions that differ
    ([1, 2, 3], [], False),
    ([], [0, 1, 2], False),                                  # the two lists swapped
])
def test_causal_positions_are_possible(same, other, ok):
    check = public_check("08_causal", "q3", "test_same_positions_possible")
    assert passes(check, f"causal_same = {same}\nnoncausal_same = {other}\n") is ok


# ---------------------------------------------------------------- 09: the GPT's count

BLOCKS = "2 * (2 * 8 + 3 * 8 * 8 + 3 * 8 + 8 * 8 + 8)"


@pytest.mark.parametrize("tied, answer, ok", [
    (True, "sum(p.numel() for p in GPT(Config(vocab_size=1024)).parameters())", True),
    (True, f"1024 * 8 + 16 * 8 + {BLOCKS} + 2 * 8", True),              # by hand
    (True, f"2 * 1024 * 8 + 16 * 8 + {BLOCKS} + 2 * 8", False),         # the tied table counted twice
    (False, f"1024 * 8 + 16 * 8 + {BLOCKS} + 2 * 8", False),            # right for a tied GPT, not this one
])
def test_gpt_count_is_that_of_the_students_own_gpt(tied, answer, ok):
    check = public_check("09_gpt", "q6", "test_count_of_your_gpt")
    code = f'''
from dataclasses import dataclass


@dataclass
class Config:
    vocab_size: int
    context: int = 16
    dim: int = 8
    layers: int = 2


class GPT(nn.Module):              # a small stand-in: a table, positions, attention-sized blocks
    def __init__(self, cfg):
        super().__init__()
        D = cfg.dim
        self.tokens, self.positions = nn.Embedding(cfg.vocab_size, D), nn.Embedding(cfg.context, D)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(D), nn.Linear(D, 3 * D), nn.Linear(D, D))
                                    for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, cfg.vocab_size, bias=False)
        if {tied}:
            self.head.weight = self.tokens.weight


gpt_params = {answer}
tying_saves = 2002 * 8
'''
    assert passes(check, code) is ok
