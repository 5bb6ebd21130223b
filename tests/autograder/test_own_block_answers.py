"""Correct 07_my_transformer answers that write their own Block (instead of the given one) earn every
point: the checks find the page's pieces in a block by what they are (two LayerNorms, an mlp of two
Linears, heads with Q, K and V and a mix, or an attention module of its own), whatever the block
names them, in whatever order it makes them, and whether the blocks sit in an nn.ModuleList or an
nn.Sequential. Graded through the real grader, one batch."""
from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat
import pytest

from autograder import mutants

NOTEBOOK = "07_my_transformer"
pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not (mutants.BUILD / f"{NOTEBOOK}-solution.ipynb").exists(),
                                 reason=f"run `course build {NOTEBOOK}` first")]

# the network around the blocks; BLOCKS makes self.blocks, FORWARD runs them on h
NETWORK = '''
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = BLOCKS
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        h = self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device))
        FORWARD
        return self.out(self.norm(h))
'''
LIST = ("nn.ModuleList([MyBlock(dim, heads) for i in range(layers)])", "for block in self.blocks:\n"
        "            h = block(h)")
SEQUENTIAL = ("nn.Sequential(*[MyBlock(dim, heads) for i in range(layers)])", "h = self.blocks(h)")

ANSWERS = {
    # its own MLP module, the course's MultiHead, its own names for everything
    "own_mlp_module": ('''
        class FeedForward(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.up = nn.Linear(dim, 4 * dim)
                self.act = nn.GELU()
                self.down = nn.Linear(4 * dim, dim)

            def forward(self, x):
                return self.down(self.act(self.up(x)))


        class MyBlock(nn.Module):
            def __init__(self, dim, heads):
                super().__init__()
                self.ln1 = nn.LayerNorm(dim)
                self.attn = MultiHead(dim, heads)
                self.ln2 = nn.LayerNorm(dim)
                self.ffn = FeedForward(dim)

            def forward(self, x):
                x = x + self.attn(self.ln1(x))
                return x + self.ffn(self.ln2(x))
    ''', LIST),
    # the mlp an nn.Sequential made first, the norms after it (the second norm made first), its own
    # attention with one matrix for all the queries, keys and values, the blocks in an nn.Sequential
    "sequential_mlp_own_attention": ('''
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
                return self.proj(torch.cat(outs, dim=-1))


        class MyBlock(nn.Module):
            def __init__(self, dim, heads):
                super().__init__()
                self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
                self.after = nn.LayerNorm(dim)
                self.talk = SelfAttention(dim, heads)
                self.before = nn.LayerNorm(dim)

            def forward(self, x):
                x = x + self.talk(self.before(x))
                return x + self.mlp(self.after(x))
    ''', SEQUENTIAL),
    # the course's heads kept in the block itself with a mix of its own name, the mlp's layers
    # directly on the block, every piece made in another order
    "heads_and_layers_in_the_block": ('''
        class MyBlock(nn.Module):
            def __init__(self, dim, heads):
                super().__init__()
                self.fc2 = nn.Linear(4 * dim, dim)
                self.norm_b = nn.LayerNorm(dim)
                self.proj = nn.Linear(dim, dim)
                self.fc1 = nn.Linear(dim, 4 * dim)
                self.heads = nn.ModuleList([Head(dim, dim // heads) for i in range(heads)])
                self.norm_a = nn.LayerNorm(dim)

            def forward(self, x):
                z = self.norm_a(x)
                x = x + self.proj(torch.cat([head(z) for head in self.heads], dim=-1))
                return x + self.fc2(F.gelu(self.fc1(self.norm_b(x))))
    ''', LIST),
}


def answer(blocks: str, kind: tuple[str, str]) -> str:
    made, run = kind
    return textwrap.dedent(blocks).strip() + "\n\n" + NETWORK.replace("BLOCKS", made).replace("FORWARD", run)


def test_own_blocks_earn_every_point(tmp_path: Path) -> None:
    subs = tmp_path / "submissions"
    subs.mkdir()
    for stem, (blocks, kind) in ANSWERS.items():
        nb = mutants.swap_last(NOTEBOOK, lambda source: "MyTransformer" in mutants.defines(source),
                               answer(blocks, kind), f"{NOTEBOOK}: no cell defines MyTransformer")
        nbformat.write(nb, subs / f"{stem}.ipynb")
    rows = mutants.grade_folder(NOTEBOOK, subs, tmp_path / "graded", workers=1)
    lost = {stem: (rows[stem]["grading_status"], mutants.failed_tests(tmp_path / "graded" / "results", stem))
            for stem in ANSWERS
            if rows[stem]["grading_status"] != "ok" or mutants.lost_questions(NOTEBOOK, rows[stem])}
    assert not lost, f"correct answers with blocks of their own lost points: {lost}"
