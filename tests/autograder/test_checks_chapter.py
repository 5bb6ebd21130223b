"""autograder.checks.nb09.chapter and .suspects: 09's reference GPT, its gates, and the networks the
student's own checks are tried on, against right, broken and degenerate pieces (fast, in-process)."""
from __future__ import annotations

import pytest
import torch
from checks_helpers import notebook

from autograder.checks import Hint
from autograder.checks.nb09 import chapter, suspects
from course import handles

CHAPTER = '''
from dataclasses import dataclass
@dataclass
class Config:
    vocab_size: int
    context: int = 128
    dim: int = 128
    heads: int = 4
    layers: int = 4
    dropout: float = 0.2

class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.drop = nn.Dropout(cfg.dropout)
        self.register_buffer("mask", torch.ones(cfg.context, cfg.context, dtype=torch.bool).tril())
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.heads, D // self.heads).transpose(1, 2) for t in (q, k, v))
        dots = q @ k.transpose(-2, -1) / math.sqrt(D // self.heads)
        dots = dots.masked_fill(~self.mask[:T, :T], -math.inf)
        y = (dots.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
        return self.drop(self.out(y))

class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.up, self.down = nn.Linear(cfg.dim, 4 * cfg.dim), nn.Linear(4 * cfg.dim, cfg.dim)
        self.drop = nn.Dropout(cfg.dropout)
    def forward(self, x):
        return self.drop(self.down(F.gelu(self.up(x))))
'''


def _attention(nb, D=12, H=3, dropout=0.0):
    attn = nb.SelfAttention(nb.Config(vocab_size=5, context=8, dim=D, heads=H, layers=1, dropout=dropout))
    values = chapter.nontrivial(attn.params(values=False))
    attn.set_params(values)
    return attn.eval(), values


def test_the_chapters_attention_as_written_out_and_its_gates():
    torch.manual_seed(0)
    with notebook(CHAPTER) as nb:
        attn, values = _attention(nb)
        x = torch.randn(2, 6, 12)
        chapter.attends(attn, values, x)
        out, allowed = chapter.hears(attn, x)
        assert torch.equal(allowed, torch.ones(6, 6, dtype=torch.bool).tril())
        assert torch.allclose(out, chapter.attention(values, x, 3, allowed), atol=1e-5)
        mlp = nb.MLP(nb.Config(vocab_size=5, dim=8, dropout=0.5))
        values = chapter.nontrivial(mlp.params(values=False))
        mlp.set_params(values)
        x = torch.randn(3, 4, 8)
        calm = chapter.works(mlp.eval(), values, x, ("up.weight", "down.weight"), "your MLP")
        assert torch.allclose(calm, chapter.mlp(values, x), atol=1e-5)
        chapter.dropout(mlp, x, calm, "your MLP")
    no_mask = CHAPTER.replace("dots.masked_fill(~self.mask[:T, :T], -math.inf)", "dots")
    with notebook(no_mask) as nb:
        attn, _ = _attention(nb)
        assert not chapter.hears(attn, torch.randn(2, 6, 12))[1].triu(1).eq(0).all()   # it hears the future
    values_unused = CHAPTER.replace("@ v).transpose", "@ q).transpose")
    with notebook(values_unused) as nb, pytest.raises(Hint, match="the values"):
        attn, values = _attention(nb)
        chapter.attends(attn, values, torch.randn(2, 6, 12))
    with notebook(CHAPTER.replace("return self.drop(self.down", "return (self.down")) as nb, \
            pytest.raises(AssertionError, match="dropout"):
        mlp = nb.MLP(nb.Config(vocab_size=5, dim=8, dropout=0.5))
        chapter.dropout(mlp, torch.randn(3, 4, 8), mlp.eval()(torch.randn(3, 4, 8)), "your MLP")


def test_suspects_are_what_their_bug_says():
    torch.manual_seed(0)
    P = {"qkv.weight": torch.randn(36, 12), "qkv.bias": torch.zeros(36),
         "out.weight": torch.randn(12, 12), "out.bias": torch.randn(12)}
    x = torch.randn(2, 5, 12)
    right = suspects.suspect(P, x, 3)
    allowed = torch.ones(5, 5, dtype=torch.bool).tril()
    double = {n: t.double() for n, t in P.items()}
    assert torch.allclose(right, chapter.attention(double, x.double(), 3, allowed))
    for bug in suspects.BUGS:
        if bug is not None:
            assert not torch.allclose(suspects.suspect(P, x, 3, bug), right), bug
    model, peeker = suspects.Peeking(10), suspects.Peeking(10, peek="last", size=1e-3)
    a, b = suspects.last_token_differs(2, 6, 10)
    assert torch.allclose(model(a)[:, :-1], model(b)[:, :-1])
    assert not torch.allclose(peeker(a)[:, :-1], peeker(b)[:, :-1])
    neutral = suspects.cross_entropy(suspects.Sure(50, 0.0), a, b)
    assert neutral == pytest.approx(torch.log(torch.tensor(50.0)).item())
    assert suspects.cross_entropy(suspects.Sure(50, 4.0), a, b) > neutral


BLOCK = CHAPTER + '''
class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(cfg.dim), nn.LayerNorm(cfg.dim)
        self.attn, self.mlp = SelfAttention(cfg), MLP(cfg)
    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))
'''


def test_a_block_is_checked_with_the_chapters_attention_when_its_own_raises():
    torch.manual_seed(0)
    raises = BLOCK.replace("B, T, D = x.shape", "B, T, D = x.shap")
    for code, swapped in [(BLOCK, []), (raises, ["SelfAttention"])]:
        with notebook(code) as nb:
            pieces = {"SelfAttention": nb.SelfAttention, "MLP": nb.MLP}
            with chapter.working_pieces(nb.Block, nb.Config, pieces, 8, 2, 6) as used:
                block = nb.Block(nb.Config(vocab_size=5, context=6, dim=8, heads=2, layers=1, dropout=0.0))
            assert used == swapped
            x = torch.randn(2, 5, 8)
            out = block(x)                       # the chapter's attention, built into the block, still there
            assert type(out) is torch.Tensor and out.shape == x.shape
            if swapped:
                assert torch.allclose(block.attn(x), chapter.ReferenceSelfAttention(8, 2)(x), atol=1e-6)


def _cells_of_10(*names: str) -> str:
    """The solution's cells of 10 that define `names` (the GIVEN page and model.py too), in notebook order."""
    from autograder import mutants
    solution = mutants.solution_notebook("10_gpt_extension")
    cells = [c.source.partition("# END SOLUTION")[0] for c in solution.cells
             if c.cell_type == "code"
             and (mutants.defines(c.source) & set(names) or "page = _make_page()" in c.source)]
    return "from tqdm.auto import tqdm\nfrom course.training import Seed\n" + "\n".join(cells) + "\n"


@pytest.mark.parametrize("copy, passes", [
    ("", True),                                                  # the solution's CopyToMyTransformer
    # the GPT it was given, in a class whose name ends in MyTransformer
    ("class NotMyTransformer(nn.Module):\n"
     "    def __init__(self, gpt):\n        super().__init__()\n        self.gpt = gpt\n"
     "    def forward(self, ids):\n        return chapter_gpt(self.gpt, ids)\n"
     "def CopyToMyTransformer(gpt):\n    return NotMyTransformer(gpt)\n", False),
    # the page's layout, but the forward keeps to the GPT it was given (kept out of the parameters)
    ("def CopyToMyTransformer(gpt):\n"
     "    net = page.MyTransformer(gpt.cfg.vocab_size, gpt.cfg.dim, gpt.cfg.heads, gpt.cfg.layers,\n"
     "                             max_length=gpt.cfg.context, causal=True)\n"
     "    kept = [gpt]\n    net.forward = lambda ids: chapter_gpt(kept[0], ids)\n    return net\n", False),
])
def test_a_copy_is_the_pages_transformer_whose_weights_do_the_work(copy, passes):
    gpt_forward = (
        "def chapter_gpt(gpt, ids):\n"
        "    from autograder.checks.nb09 import chapter\n"
        "    P = {n: p.detach() for n, p in gpt.named_parameters()}\n"
        "    return chapter.logits(P, ids, gpt.cfg.heads, gpt.cfg.layers)\n")
    with notebook(_cells_of_10("Config", "GPTWeights", "CopyToMyTransformer") + gpt_forward + copy) as nb:
        Config, GPTWeights, Copy = nb.Config, nb.GPTWeights, nb.CopyToMyTransformer
        torch.manual_seed(3)
        for V, C, D, H, L in [(30, 12, 12, 3, 2), (17, 9, 16, 2, 1)]:
            gpt = GPTWeights(Config(vocab_size=V, context=C, dim=D, heads=H, layers=L, dropout=0.0))
            P = chapter.gpt_weights(gpt)
            net = Copy(gpt)
            ids = torch.randint(0, V, (2, C))
            # the copy gives the right logits, whatever it is
            assert handles.close(net(ids), chapter.logits(P, ids, H, L), atol=1e-4, rtol=1e-4)
            if passes:
                chapter.is_page_transformer(net, V, C, D, H, L)
            else:
                with pytest.raises(Hint):
                    chapter.is_page_transformer(net, V, C, D, H, L)
