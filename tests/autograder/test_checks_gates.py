"""Gates fail as themselves: a precondition of a test's property (the weights could be set, the pieces
are there, the shapes match) that fails is shown as its own hint, never as the property's message;
and the page's Block is found in a block of any making (fast, in-process)."""
from __future__ import annotations

import pytest
import torch
from checks_helpers import notebook

from autograder.checks import Hint, hints, params, reference
from course.handles import StudentError

PROPERTY = "After the token and position vectors, your forward should send them through every block."


def _shown(exc: BaseException) -> str | None:
    """What a student reads of a hidden case that failed with `exc`."""
    return hints.shown(hints.judge_message(exc, "Test case failed"), PROPERTY)


def _raised(test) -> BaseException:
    with pytest.raises(Exception) as info:
        test()
    return info.value


def test_a_failure_inside_a_gate_is_the_gates_hint():
    def missing_weight():
        with hints.gate("your MyTransformer should be made of the page's pieces"):
            {}["weight"]
    assert _shown(_raised(missing_weight)) == "your MyTransformer should be made of the page's pieces"

    def set_wrong():
        with hints.gate("the weights could not be set"):
            raise RuntimeError("shapes do not match")
    assert _shown(_raised(set_wrong)) == "the weights could not be set"


def test_a_hint_inside_a_gate_keeps_its_words_and_a_crash_says_where():
    def precise():
        with hints.gate("the pieces are missing"):
            raise Hint("the mlp has 3 nn.Linear layers, not 2")
    assert _shown(_raised(precise)) == "the mlp has 3 nn.Linear layers, not 2"

    def crashed():
        with hints.gate("the pieces are missing"):
            error = StudentError("IndexError: index out of range")
            error.line = "h = self.position(torch.arange(99))"
            raise error
    assert _shown(_raised(crashed)) == ("the pieces are missing (your code raised IndexError at "
                                        "`h = self.position(torch.arange(99))`)")

    def absent():               # a piece asked for through a handle that is not there: no line to show
        with hints.gate("the pieces are missing"):
            raise StudentError("AttributeError: 'MyTransformer' object has no attribute 'blocks'")
    assert _shown(_raised(absent)) == f"the pieces are missing ({hints.NAMES})"


def test_a_layer_asked_for_by_its_name_that_is_not_there_is_said_without_the_errors_words():
    """Q, K, V made as nn.Parameter, mix called proj, a ModuleList for the mlp: the check fails on a
    name or a method the notebook fixes, and says so, in or out of a gate; the error's own words
    (which a submission could fill with a hidden input) are never shown."""
    unset = StudentError("KeyError: \"there is no parameter or buffer called 'Q.weight' 0.25 -1.5\"")

    def gated():
        with hints.gate("your Head does not work on a batch"):
            raise unset
    assert _shown(_raised(gated)) == f"your Head does not work on a batch ({hints.NAMES})"
    assert _shown(unset) == f"{PROPERTY} ({hints.NAMES})"
    assert _shown(StudentError("NotImplementedError: Module [ModuleList] is missing forward")) == (
        f"{PROPERTY} ({hints.NAMES})")
    assert "0.25" not in _shown(unset)
    assert _shown(StudentError("ValueError: 0.25")) == PROPERTY


def test_a_gates_hint_is_not_hidden_by_the_failure_that_follows_it():
    def rewrapped():            # a test that turns the gate's failure into its own, generic one
        try:
            raise Hint("your blocks should have two nn.LayerNorm(8), yours have 1")
        except Hint:
            raise AssertionError("does not compute out(norm(blocks(h)))") from None
    assert _shown(_raised(rewrapped)) == "your blocks should have two nn.LayerNorm(8), yours have 1"

    def plain():                # no gate failed: the property's own message
        raise AssertionError("does not compute out(norm(blocks(h)))")
    assert _shown(_raised(plain)) == PROPERTY
    assert hints.gate_of(_raised(plain)) is None


def test_the_reference_pieces_fail_as_gates():
    with pytest.raises(Hint, match="weight is missing"):
        reference.linear({}, "out.", torch.zeros(3))
    with pytest.raises(Hint, match="no scale or shift"):
        reference.layer_norm({"weight": torch.ones(3)}, torch.zeros(3))
    with pytest.raises(Hint, match="3 nn.Linear layers"):
        reference.mlp_layers({p: [reference.LINEAR] for p in "abc"}, {}, 4)


HEAD = '''
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        w = torch.softmax(self.Q(x) @ self.K(x).transpose(-2, -1) / math.sqrt(self.Q.out_features), dim=-1)
        return w @ self.V(x)
'''
PAGE_BLOCK = HEAD + '''
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))


class MyBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))
'''
OWN_ATTENTION = '''
class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        d = q.shape[-1] // self.heads
        outs = []
        for i in range(self.heads):
            s = slice(i * d, (i + 1) * d)
            w = torch.softmax(q[..., s] @ k[..., s].transpose(-2, -1) / math.sqrt(d), dim=-1)
            outs.append(w @ v[..., s])
        return self.proj(torch.cat(outs, dim=-1)), w


class FeedForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.down = nn.Linear(4 * dim, dim)
        self.up = nn.Linear(dim, 4 * dim)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class MyBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ffn = FeedForward(dim)
        self.late = nn.LayerNorm(dim)
        self.talk = SelfAttention(dim, heads)
        self.early = nn.LayerNorm(dim)

    def forward(self, x):
        x = x + self.talk(self.early(x))[0]
        return x + self.ffn(self.late(x))
'''
INLINE = HEAD + '''
class MyBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.fc2 = nn.Linear(4 * dim, dim)
        self.n2 = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.heads = nn.ModuleList([Head(dim, dim // heads) for i in range(heads)])
        self.n1 = nn.LayerNorm(dim)

    def forward(self, x):
        z = self.n1(x)
        x = x + self.proj(torch.cat([head(z) for head in self.heads], dim=-1))
        return x + self.fc2(F.gelu(self.fc1(self.n2(x))))
'''
BROKEN = {
    "no residual around the attention": (PAGE_BLOCK, "x = x + self.attention(self.norm1(x))",
                                         "x = self.attention(self.norm1(x))"),
    "ReLU in the mlp": (OWN_ATTENTION, "F.gelu(self.up(x))", "F.relu(self.up(x))"),
    "one norm for both": (INLINE, "self.fc1(self.n2(x))", "self.fc1(self.n1(x))"),
    "does nothing": (PAGE_BLOCK, "x = x + self.attention(self.norm1(x))", "return x"),
}


def _matches(nb, dim: int = 12, heads: int = 3) -> bool:
    torch.manual_seed(0)
    block = nb.MyBlock(dim, heads)
    values = params.put(block, params.scaled(block.params(values=False), matrix=1.0, weight=(1, 0.5)))
    pieces = reference.block_pieces(block.modules(), values, dim, heads)
    attention = params.module_at(block, pieces.attention_module) if pieces.attention_module else None
    x = torch.randn(2, 5, dim)
    said = block(x)
    wants = reference.own_block(pieces, values, x, attention)
    return any(torch.allclose(said, want, atol=1e-5) for want in wants)


@pytest.mark.parametrize("code", [PAGE_BLOCK, OWN_ATTENTION, INLINE], ids=["page", "own_attention", "inline"])
def test_the_pages_block_is_found_whatever_its_names_and_order(code):
    with notebook(code) as nb:
        assert _matches(nb)
        assert _matches(nb, dim=8, heads=1)


def test_the_pages_block_is_its_reference():
    with notebook(PAGE_BLOCK) as nb:
        block = nb.MyBlock(12, 3)
        values = params.put(block, params.scaled(block.params(values=False), weight=(1, 0.5)))
        pieces = reference.block_pieces(block.modules(), values, 12, 3)
        assert pieces.norms == ("norm1.", "norm2.") and pieces.mlp == ("mlp.0.", "mlp.2.")
        assert pieces.mix == "attention.mix." and pieces.heads == ("attention.heads.0.", "attention.heads.1.",
                                                                   "attention.heads.2.")
        x = torch.randn(2, 5, 12)
        split = {name: {n[len(name) + 1:]: v for n, v in values.items() if n.startswith(name + ".")}
                 for name in ("norm1", "attention", "norm2", "mlp")}
        assert torch.allclose(reference.own_block(pieces, values, x)[0],
                              reference.block(split, ("0.", "2."), x, 3), atol=1e-5)


@pytest.mark.parametrize("bug", list(BROKEN))
def test_a_block_that_is_not_the_pages_does_not_match(bug):
    code, right, wrong = BROKEN[bug]
    assert right in code
    with notebook(code.replace(right, wrong)) as nb:
        assert not _matches(nb)


def test_a_block_without_the_pages_pieces_fails_as_a_gate():
    one_norm = PAGE_BLOCK.replace("self.mlp(self.norm2(x))", "self.mlp(self.norm1(x))") \
        .replace("self.norm2 = nn.LayerNorm(dim)", "")
    with notebook(one_norm) as nb, pytest.raises(Hint, match="two nn.LayerNorm"):
        _matches(nb)
