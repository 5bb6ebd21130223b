"""autograder.checks: the gates (does the answer do the work?) and the properties, each against a
correct answer, broken ones and ones that do no work (fast, in-process)."""
from __future__ import annotations

import pytest
import torch
from checks_helpers import notebook

from autograder.checks import Hint, params, properties, reference, work
from course.handles import StudentError

ATTENTION = '''
def Attention(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v, w
'''
BROKEN_ATTENTION = {
    "softmax over the queries": ATTENTION.replace("dim=-1", "dim=-2"),
    ".T instead of transpose": ATTENTION.replace("k.transpose(-2, -1)", "k.T"),
    "output detached": ATTENTION.replace("return w @ v, w", "return (w @ v).detach(), w"),
    "later sites preferred": ATTENTION.replace("/ math.sqrt(q.shape[-1])",
                                               "/ math.sqrt(q.shape[-1]) + torch.arange(k.shape[-2])"),
}
DEGENERATE_ATTENTION = {
    "uniform": "def Attention(q, k, v):\n    w = torch.ones(q.shape[:-1] + (k.shape[-2],))\n"
               "    w = w / w.shape[-1]\n    return w @ v, w\n",
    "echo": "def Attention(q, k, v):\n    return v, torch.eye(v.shape[-2]).expand(*v.shape[:-1], -1)\n",
    "zeros": "def Attention(q, k, v):\n"
             "    return torch.zeros_like(v), torch.zeros(*q.shape[:-1], k.shape[-2])\n",
    "random": "def Attention(q, k, v):\n    w = torch.rand(*q.shape[:-1], k.shape[-2]).softmax(-1)\n"
              "    return w @ v, w\n",
}


def test_attention_works_for_a_correct_attention_only():
    with notebook(ATTENTION) as nb:
        work.attention_works(nb.Attention)
    for name, code in DEGENERATE_ATTENTION.items():
        with notebook(code) as nb, pytest.raises(Hint):
            work.attention_works(nb.Attention)
            pytest.fail(name)


def test_rows_are_probabilities():
    q, k = torch.randn(2, 5, 3)
    properties.rows_are_probabilities(reference.attention_weights(q, k), 5)
    for wrong in (torch.full((5, 5), 0.3), reference.attention_weights(q, k).T, torch.ones(5, 4) / 4,
                  reference.attention_weights(q, k) - 0.01):
        with pytest.raises(AssertionError):
            properties.rows_are_probabilities(wrong, 5)


def _batch(nb):
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 3, 5, 4)
    out, w = nb.Attention(q, k, v)
    properties.batch_is_alone(nb.Attention, (q, k, v), (out, w), [(0, 0), (1, 2)])


def _permutation(nb):
    torch.manual_seed(0)
    properties.permutation(nb.Attention, tuple(torch.randn(3, 6, 4)), torch.randperm(6), weights=True)


def _gradient(nb):
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 4, dtype=torch.float64)
    r = torch.randn(5, 4, dtype=torch.float64)
    _, grads, _ = nb.Attention.vjp(q, k, v, cotangent=(r, None))
    u = torch.randn(5, 4, dtype=torch.float64)
    got = float((grads[2] * u).sum()) if grads[2] is not None else 0.0
    properties.slope_agrees(got, lambda h: nb.Attention(q, k, v + h * u)[0], r, 1e-4, "the gradient differs")


@pytest.mark.parametrize("check, broken", [(_batch, ".T instead of transpose"),
                                           (_permutation, "later sites preferred"),
                                           (_gradient, "output detached")])
def test_each_property_holds_for_the_right_answer_and_fails_on_its_bug(check, broken):
    with notebook(ATTENTION) as nb:
        check(nb)
    with notebook(BROKEN_ATTENTION[broken]) as nb, pytest.raises((AssertionError, StudentError)):
        check(nb)                                # wrong numbers, or a crash on a batch


WITH_POSITION = '''
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)
    def forward(self, x):
        return self.out(self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device)))
'''
TABLES = ("embed.weight", "position.weight", "out.weight")


def test_logits_use_the_tokens_and_every_table():
    with notebook(WITH_POSITION) as nb:
        work.logits_use(nb.WithPosition(9, 8, 12), 9, 5, TABLES)
        net = nb.WithPosition(9, 8, 12)
        values = params.put(net, params.normal(net.params(values=False)))
        x = torch.randint(0, 9, (2, 5))
        values["position.weight"] = torch.zeros(12, 8)
        net.set_params(values)
        assert torch.allclose(net(x), reference.word_logits(values, x), atol=1e-5)
    no_positions = WITH_POSITION.replace(" + self.position(torch.arange(x.shape[-1], device=x.device))", "")
    constant = WITH_POSITION.replace("return self.out(", "return 0 * self.out(")
    for code in (no_positions, constant):
        with notebook(code) as nb, pytest.raises(Hint):
            work.logits_use(nb.WithPosition(9, 8, 12), 9, 5, TABLES)


def test_another_device_finds_tensors_made_on_the_cpu():
    with notebook(WITH_POSITION) as nb:
        net = nb.WithPosition(9, 8, 12)
        net.to("meta")
        got = properties.on_another_device(net, torch.zeros(2, 5, dtype=torch.long, device="meta"))
        assert got["device"] == "meta" and got["shape"] == [2, 5, 9]
    with notebook(WITH_POSITION.replace(", device=x.device", "")) as nb, pytest.raises(AssertionError):
        net = nb.WithPosition(9, 8, 12)
        net.to("meta")
        properties.on_another_device(net, torch.zeros(2, 5, dtype=torch.long, device="meta"))


def test_rows_of_a_table_cut_a_length_only_for_a_table_of_another_size():
    with notebook(WITH_POSITION) as nb:
        assert params.rows(nb.WithPosition(9, 8, 12).params(values=False), "position.weight", 20) == 12
        assert params.rows(nb.WithPosition(9, 8, 12).params(values=False), "position.weight", 5) == 5
        assert params.rows({}, "position.weight", 20) == 20


HEAD = '''
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
    def forward(self, x):
        out, w = Attention(self.Q(x), self.K(x), self.V(x))
        self.weights = w.detach()
        return out
'''


def test_head_works_with_the_reference_attention_and_names_the_matrix_it_ignores():
    with notebook(HEAD + "Attention = None\n") as nb:          # the notebook's Attention is not needed
        work.head_works(nb.Head, 12, 4, 6)
        head = nb.Head(8, 4)
        x = torch.randn(5, 8)
        values = params.put(head, params.scaled(head.params(values=False)))
        with head.swapped(Attention=reference.attention):
            out, w = properties.and_weights(head)(x)
        assert torch.allclose(out, reference.head(values, x)[0], atol=1e-6)
    for code, hint in [(HEAD.replace("self.K(x), ", "self.Q(x), "), "K"),
                       (HEAD.replace("self.V(x)", "x[..., :4]"), "V")]:
        with notebook(code) as nb, pytest.raises(Hint, match=f"when {hint} changes"):
            work.head_works(nb.Head, 12, 4, 6)


MULTIHEAD = HEAD + '''
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for _ in range(heads)])
        self.mix = nn.Linear(dim, dim)
    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
'''


def test_multihead_works_and_matches_the_reference_multihead():
    with notebook(MULTIHEAD) as nb:
        work.multihead_works(nb.MultiHead, 12, 3, 5)
        multi = nb.MultiHead(12, 3)
        values = params.put(multi, params.scaled(multi.params(values=False)))
        x = torch.randn(2, 5, 12)
        with multi.swapped(Attention=reference.attention):
            got = multi(x)
        assert torch.allclose(got, reference.multihead(values, x, 3)[0], atol=1e-5)
    heads_unused = MULTIHEAD.replace("torch.cat([head(x) for head in self.heads], dim=-1)", "x")
    with notebook(heads_unused) as nb, pytest.raises(Hint, match="the Q of its heads"):
        work.multihead_works(nb.MultiHead, 12, 3, 5)


BLOCK = MULTIHEAD + '''
class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))
'''


def test_block_works_and_matches_the_reference_block():
    with notebook(BLOCK) as nb:
        work.block_works(nb.Block, 12, 3, 5)
        block = nb.Block(12, 3)
        pieces = {name: params.scaled(getattr(block, name).params(values=False))
                  for name in ("norm1", "attention", "norm2", "mlp")}
        for name, values in pieces.items():
            getattr(block, name).set_params(values)
        layers = reference.mlp_layers(block.mlp.modules(), pieces["mlp"], 12)
        assert layers == [("0.", "2.")]
        x = torch.randn(2, 5, 12)
        with block.swapped(Attention=reference.attention):
            got = block(x)
        assert torch.allclose(got, reference.block(pieces, layers[0], x, 3), atol=1e-5)
    for bug, part in [("x = x + self.attention(self.norm1(x))", "attention"),
                      ("return x + self.mlp(self.norm2(x))", "mlp")]:
        skipped = BLOCK.replace(bug, "return x" if part == "mlp" else "pass")
        with notebook(skipped) as nb, pytest.raises(Hint, match=f"its {part}"):
            work.block_works(nb.Block, 12, 3, 5)


def test_layer_norm_by_hand_is_layer_norm():
    x = 3 * torch.randn(4, 7) + 2
    assert torch.allclose(reference.layer_norm_by_hand(x), torch.nn.functional.layer_norm(x, (7,)), atol=1e-5)


MY_TRANSFORMER = BLOCK + '''
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
    def forward(self, x):
        h = self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device))
        for block in self.blocks:
            h = block(h)
        return self.out(self.norm(h))
'''
def test_transformer_works_and_matches_the_reference_network():
    with notebook(ATTENTION + MY_TRANSFORMER) as nb:
        work.transformer_works(lambda: nb.MyTransformer(13, dim=8, heads=2, layers=2, max_length=9), 13)
        net = nb.MyTransformer(11, dim=12, heads=3, layers=2, max_length=9)
        net.set_params(params.scaled(net.params(values=False), matrix=1.0, weight=(1, 0.5)))
        net.position.set_params({"weight": torch.zeros(9, 12)})
        p = {"embed": net.embed.params(), "norm": net.norm.params(), "out": net.out.params(),
             "blocks": [b.params() for b in net.blocks]}
        x = torch.randint(11, (2, 6))
        assert torch.allclose(net(x), reference.my_transformer(p, x, 3), atol=1e-4)
    broken = MY_TRANSFORMER.replace("return self.out(self.norm(h))", "return 0 * self.out(self.norm(h))")
    crashing = MY_TRANSFORMER.replace("torch.arange(x.shape[-1], device=x.device)", "torch.arange(99)")
    for code, hint in [(broken, "do not change when the tokens change"), (crashing, "raised IndexError")]:
        with notebook(ATTENTION + code) as nb, pytest.raises(Hint, match=hint):
            work.transformer_works(lambda nb=nb: nb.MyTransformer(13, dim=8, heads=2, layers=2), 13)
