"""A class of 08_causal submissions for the similarity flags (autograder/similarity.py): honest
students built from independently written correct answers, and copies disguised as students disguise
them. Used by tests/instructor/test_similarity.py (graded through `course grade`) and by
benchmarks/similarity.py (the library comparison and the timing of a class of 300).

Every answer below is a correct answer written on its own: the mutation suite's `ok_` variants of
08 (except ok_multihead_flag_set_after, right only beside a Head that keeps its switch in
`self.causal`) and answers in other styles written for this class; the test grades them all. An
honest student takes one answer per piece, drawn at random, and no two honest students share more
than two pieces: they may agree on a piece or two, as honest students writing the obvious code do,
never on a notebook.
"""
from __future__ import annotations

import ast
import copy
import io
import json
import random
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "08_causal"
# the student notebook's answer cells, by piece
CELLS = {"Attention": 7, "Head": 8, "MultiHead": 9, "Block": 10, "MyTransformer": 11, "plot": 15,
         "q3": 18, "WriteLeftToRight": 23}
LARGE = ("Attention", "MyTransformer", "q3", "WriteLeftToRight")
LARGE_SHARED = 2
Q3_PRINT = ('print("causal=True: identical at", causal_same, "  causal=False: identical at", '
            'noncausal_same)\n')


def _ok(name: str) -> str:
    """An alternative correct answer of the mutation suite (its code, without the header lines; as
    autograder.mutants.read_mutant reads it, without importing nbformat)."""
    lines = (ROOT / "autograder" / "assignments" / NAME / "mutants" / f"{name}.py").read_text().splitlines()
    while lines and re.match(r"# (question|expect|replaces|why):", lines[0]):
        lines.pop(0)
    return "\n".join(lines).strip() + "\n"


ANSWERS: dict[str, list[str]] = {
    "Attention": [
        _ok("ok_additive_mask"),
        _ok("ok_tril_allowed"),
        '''def Attention(q, k, v, causal=False):
    d = q.size(-1)
    scores = torch.einsum("...id,...jd->...ij", q, k) / d ** 0.5
    if causal:
        n = scores.size(-1)
        above = torch.ones(n, n, device=scores.device).triu(diagonal=1).bool()
        scores = scores.masked_fill(above, float("-inf"))
    w = scores.softmax(-1)
    return torch.einsum("...ij,...jd->...id", w, v), w
''',
        '''def Attention(q, k, v, causal=False):
    # energies, as on the page: low energy = strong attention
    energy = -(q @ k.mT) / math.sqrt(k.shape[-1])
    if causal:
        size = energy.shape[-1]
        rows = torch.arange(size, device=q.device)
        future = rows[None, :] > rows[:, None]          # j > i: not heard
        energy = torch.where(future, torch.full_like(energy, math.inf), energy)
    boltz = torch.exp(-(energy - energy.min(dim=-1, keepdim=True).values))
    weights = boltz / boltz.sum(dim=-1, keepdim=True)
    return weights @ v, weights
''',
        '''def causal_mask(length, device):
    """True where a query must not look (the keys after it)."""
    return torch.tril(torch.ones(length, length, device=device)) == 0


def Attention(q, k, v, causal=False):
    logits = torch.matmul(q, k.transpose(-1, -2))
    logits = logits / q.shape[-1] ** 0.5
    if causal:
        logits = logits.masked_fill(causal_mask(q.shape[-2], q.device), -1e9)
    weights = F.softmax(logits, dim=-1)
    out = torch.matmul(weights, v)
    return out, weights
''',
        '''def Attention(q, k, v, causal=False):
    q = q * (1.0 / math.sqrt(q.shape[-1]))
    dot = q @ k.transpose(-2, -1)
    if causal:
        L = dot.shape[-1]
        keep = torch.ones(L, L, dtype=torch.bool, device=dot.device).tril()
        dot = dot.masked_fill(keep.logical_not(), -math.inf)
    attn = torch.softmax(dot, -1)
    return attn @ v, attn
''',
    ],
    "Head": [
        _ok("ok_head_own_flag_name"),
        '''class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.causal = causal
        self.Q, self.K, self.V = (nn.Linear(dim, head_dim, bias=False) for _ in range(3))

    def forward(self, x):
        out, w = Attention(self.Q(x), self.K(x), self.V(x), causal=self.causal)
        self.weights = w.detach()
        return out
''',
        '''class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        for name in "QKV":
            setattr(self, name, nn.Linear(dim, head_dim, bias=False))
        self.is_causal = causal

    def forward(self, x):
        q, k, v = (getattr(self, name)(x) for name in "QKV")
        result, attention = Attention(q, k, v, causal=self.is_causal)
        self.weights = attention.detach()
        return result
''',
        '''class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.mask_future = causal

    def forward(self, x):
        queries = self.Q(x)
        keys = self.K(x)
        values = self.V(x)
        output, weights = Attention(queries, keys, values, self.mask_future)
        self.weights = weights.detach().clone()
        return output
''',
        '''class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        nn.Module.__init__(self)
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = bool(causal)

    def forward(self, x):
        res = Attention(self.Q(x), self.K(x), self.V(x), causal=self.causal)
        self.weights = res[1].detach()
        return res[0]
''',
    ],
    "MultiHead": [
        '''class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        head_dim = dim // heads
        self.heads = nn.ModuleList()
        self.heads.extend([Head(dim, head_dim, causal=causal) for _ in range(heads)])
        self.mix = nn.Linear(dim, dim, bias=True)

    def forward(self, x):
        stacked = torch.stack([head(x) for head in self.heads], dim=-2)   # (..., L, heads, head_dim)
        return self.mix(stacked.flatten(-2))
''',
        _ok("ok_multihead_one_matrix"),
        '''class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        size = dim // heads
        self.heads = nn.ModuleList(Head(dim, size, causal=causal) for _ in range(heads))
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        outs = [h(x) for h in self.heads]
        return self.mix(torch.cat(outs, -1))
''',
        '''class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for i in range(heads):
            self.heads.append(Head(dim, dim // heads, causal))
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        pieces = []
        for head in self.heads:
            pieces.append(head(x))
        joined = torch.cat(pieces, dim=x.dim() - 1)
        return self.mix(joined)
''',
        '''class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        assert dim % heads == 0, "dim must be a multiple of heads"
        self.heads = nn.ModuleList([Head(dim, dim // heads, causal=causal) for _ in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.concat(list(map(lambda h: h(x), self.heads)), dim=-1))
''',
    ],
    "Block": [
        _ok("ok_block_keyword"),
        '''class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads, causal=causal)
        hidden = 4 * dim
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))
''',
        '''class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.attention = MultiHead(dim, heads, causal)
        self.norm1 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, dim * 4),
            nn.GELU(),
            nn.Linear(dim * 4, dim),
        )
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x):
        a = self.attention(self.norm1(x))
        y = x + a
        m = self.mlp(self.norm2(y))
        return y + m
''',
        '''class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads, causal=causal)
        self.norm2 = nn.LayerNorm(dim)
        layers = [nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)]
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        for norm, part in ((self.norm1, self.attention), (self.norm2, self.mlp)):
            x = x + part(norm(x))
        return x
''',
    ],
    "MyTransformer": [
        '''class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, causal=causal) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        where = torch.arange(x.size(-1), device=x.device)
        h = self.position(where) + self.embed(x)
        for b in self.blocks:
            h = b(h)
        h = self.norm(h)
        return self.out(h)
''',
        '''class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(Block(dim, heads, causal))
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        L = x.shape[-1]
        h = self.embed(x) + self.position.weight[:L]
        for block in self.blocks:
            h = block(h)
        return self.out(self.norm(h))
''',
        '''import functools


class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, causal=causal) for layer in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        positions = torch.arange(x.shape[-1]).to(x.device)
        hidden = self.embed(x) + self.position(positions)
        hidden = functools.reduce(lambda h, block: block(h), self.blocks, hidden)
        return self.out(self.norm(hidden))
''',
        '''class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.causal = causal
        self.max_length = max_length
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, self.causal) for layer in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        assert x.shape[-1] <= self.max_length, "sentence too long"
        idx = torch.arange(x.shape[-1], device=x.device)
        z = self.embed(x)
        z = z + self.position(idx)
        for i in range(len(self.blocks)):
            z = self.blocks[i](z)
        z = self.norm(z)
        logits = self.out(z)
        return logits
''',
        '''class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, causal) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        n = x.shape[-1]
        pos = self.position(torch.arange(n, device=x.device))
        h = self.embed(x) + pos
        h = nn.Sequential(*self.blocks)(h)
        return self.out(self.norm(h))
''',
    ],
    "q3": [
        '''Seed(0)
results = {}
for flag in [True, False]:
    net = MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=flag)
    a = net(Encode("the cat is alive")[None])[0]
    b = net(Encode("the cat is empty")[None])[0]
    results[flag] = [i for i in range(4) if torch.allclose(a[i], b[i])]
causal_same = results[True]
noncausal_same = results[False]
''' + Q3_PRINT,
        '''def identical_positions(causal):
    net = MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=causal)
    with torch.no_grad():
        alive = net(Encode("the cat is alive").unsqueeze(0)).squeeze(0)
        empty = net(Encode("the cat is empty").unsqueeze(0)).squeeze(0)
    return [pos for pos in range(4) if torch.allclose(alive[pos], empty[pos])]


causal_same = identical_positions(True)
noncausal_same = identical_positions(False)
''' + Q3_PRINT,
        '''torch.manual_seed(1)
net = MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=True)
x1, x2 = Encode("the cat is alive"), Encode("the cat is empty")
out1, out2 = net(x1[None]), net(x2[None])
print([torch.allclose(out1[0, i], out2[0, i]) for i in range(4)])
causal_same = [0, 1, 2]     # only the last site hears the last word
noncausal_same = []         # every site hears it
''' + Q3_PRINT,
        '''sentences = torch.stack([Encode("the cat is alive"), Encode("the cat is empty")])
found = []
for causal in (True, False):
    model = MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=causal)
    model.eval()
    logits = model(sentences)
    found.append([p for p in range(4) if torch.allclose(logits[0, p], logits[1, p])])
causal_same, noncausal_same = found
''' + Q3_PRINT,
        '''alive, empty = Encode("the cat is alive"), Encode("the cat is empty")


def same_at(net):
    first, second = net(alive[None])[0], net(empty[None])[0]
    return [i for i, (u, w) in enumerate(zip(first, second)) if torch.allclose(u, w)]


causal_same = same_at(MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=True))
noncausal_same = same_at(MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=False))
''' + Q3_PRINT,
    ],
    "WriteLeftToRight": [
        _ok("ok_argmax_when_cold"),
        _ok("ok_log_probs"),
        _ok("ok_unbatched_call"),
        '''@torch.no_grad()
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    story = StoryTokens(start)
    dev = next(iter(net.parameters())).device
    while story.numel() < L:
        scores = net(story.unsqueeze(0).to(dev))[0][-1].to("cpu")
        scores[STORY_MASK] = float("-inf")
        scores[STORY_UNK] = float("-inf")
        probs = F.softmax(scores / temperature, dim=-1)
        nxt = torch.multinomial(probs, num_samples=1)
        story = torch.cat((story, nxt))
    return StoryText(story)
''',
        '''@torch.no_grad()
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    x = StoryTokens(start)
    device = next(net.parameters()).device
    forbidden = [STORY_MASK, STORY_UNK]
    for _ in range(len(x), L):
        last = net(x[None].to(device))[0, -1].cpu() / temperature
        last[forbidden] = -math.inf
        weights = torch.exp(last - last.max())
        choice = torch.multinomial(weights / weights.sum(), 1)
        x = torch.cat([x, choice])
    return StoryText(x)
''',
        '''def next_token(net, x, temperature):
    logits = net(x[None])[0, -1].cpu()
    logits[STORY_MASK] = -math.inf
    logits[STORY_UNK] = -math.inf
    probs = torch.softmax(logits / temperature, dim=-1)
    return torch.multinomial(probs, 1)


@torch.no_grad()
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    device = next(net.parameters()).device
    x = StoryTokens(start).to(device)
    while len(x) < L:
        x = torch.cat([x, next_token(net, x, temperature).to(device)])
    return StoryText(x.cpu())
''',
    ],
    "plot": [
        "",
        '''torch.manual_seed(3)
q, k, v = torch.randn(3, 5, 8)
out, w = Attention(q, k, v, causal=True)
plt.matshow(w, vmin=0, vmax=1)
plt.colorbar()
plt.show()
print(w.sum(-1))
''',
        '''q, k, v = torch.randn(3, 5, 8)
_, weights = Attention(q, k, v, causal=True)
fig, ax = plt.subplots()
ax.matshow(weights.numpy(), vmin=0, vmax=1, cmap="viridis")
ax.set_title("causal weights")
plt.show()
assert torch.allclose(weights.sum(dim=-1), torch.ones(5))
''',
        '''Seed(7)
qkv = torch.randn(3, 5, 8)
att = Attention(*qkv, causal=True)[1]
plt.matshow(att, vmin=0, vmax=1)
plt.xlabel("key j")
plt.ylabel("query i")
plt.show()
print("row sums:", att.sum(dim=1).tolist())
''',
    ],
}
PIECES = list(CELLS)


def honest_choices(n: int = 30, seed: int = 0) -> list[dict[str, int]]:
    """Which answer each honest student takes: no two share more than two pieces, nor more than one
    large piece (a blank plot cell is no piece)."""
    rng = random.Random(seed)
    chosen: list[dict[str, int]] = []
    while len(chosen) < n:
        for _attempt in range(20000):
            pick = {p: rng.randrange(len(ANSWERS[p])) for p in PIECES}
            ok = True
            for other in chosen:
                same = [p for p in PIECES if pick[p] == other[p] and ANSWERS[p][pick[p]]]
                if len(same) > 2 or sum(p in LARGE for p in same) > LARGE_SHARED:
                    ok = False
                    break
            if ok:
                chosen.append(pick)
                break
        else:
            raise RuntimeError("no design found")
    return chosen


# ---------------------------------------------------------------- disguises

KEEP = {"self", "causal_same", "noncausal_same", "Attention", "Head", "MultiHead", "Block", "MyTransformer",
        "WriteLeftToRight", "q", "k", "v"}
SYNONYMS = ["tmp", "val", "thing", "item", "data", "res", "cur", "acc", "buf", "part", "z9", "y9"]


def rename(source: str) -> str:
    """Every name the student chose (locals, loop variables, helpers and their arguments; not the
    arguments of the page's functions, which the tests may pass by keyword) renamed."""
    tree = ast.parse(source)
    api_args = set()
    helpers = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            if node.name in KEEP or node.name in ("__init__", "forward"):
                if isinstance(node, ast.FunctionDef):
                    api_args |= {a.arg for a in node.args.args + node.args.kwonlyargs}
            else:
                helpers.add(node.name)
    names: set[str] = set(helpers)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg) and node.arg not in api_args:
            names.add(node.arg)
    names -= KEEP | api_args | {"functools"}
    mapping = {n: f"{SYNONYMS[i % len(SYNONYMS)]}_{i}" for i, n in enumerate(sorted(names))}

    class R(ast.NodeTransformer):
        def visit_Name(self, node):
            node.id = mapping.get(node.id, node.id)
            return node

        def visit_arg(self, node):
            node.arg = mapping.get(node.arg, node.arg)
            return node

        def visit_FunctionDef(self, node):
            self.generic_visit(node)
            node.name = mapping.get(node.name, node.name)
            return node

    return ast.unparse(R().visit(tree)) + "\n"


def reorder(source: str) -> str:
    """The methods of every class and the top-level definitions of the cell in reverse order."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            node.body = node.body[::-1]
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    if len(defs) > 1 and len(defs) == len(tree.body):
        tree.body = tree.body[::-1]
    return ast.unparse(tree) + "\n"


def recomment(source: str) -> str:
    """Comments removed, others written, blank lines added: the code itself unchanged."""
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            continue
        kept.append(tok)
    code = tokenize.untokenize(kept)
    out = []
    for i, line in enumerate(code.splitlines()):
        stripped = line.strip()
        if not stripped:
            continue
        indent = line[:len(line) - len(stripped)]
        if i % 3 == 1 and not stripped.startswith(("@", ")", "]", "else", "elif")):
            out.append(f"{indent}# step {i}: as explained in the lecture")
        out.append(line.rstrip())
        if i % 4 == 2:
            out.append("")
    return "\n".join(out) + "\n"


def swap_matmul(source: str) -> str:
    """``a @ b`` written ``torch.matmul(a, b)`` and the other way round."""
    tree = ast.parse(source)

    class S(ast.NodeTransformer):
        def visit_BinOp(self, node):
            self.generic_visit(node)
            if isinstance(node.op, ast.MatMult):
                return ast.Call(func=ast.Attribute(value=ast.Name("torch", ast.Load()), attr="matmul",
                                                   ctx=ast.Load()), args=[node.left, node.right], keywords=[])
            return node

        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "matmul" and isinstance(f.value, ast.Name) \
                    and f.value.id == "torch" and len(node.args) == 2 and not node.keywords:
                return ast.BinOp(left=node.args[0], op=ast.MatMult(), right=node.args[1])
            return node

    return ast.unparse(ast.fix_missing_locations(S().visit(tree))) + "\n"


SWAPPED_CALLS = {"softmax", "log_softmax", "transpose", "masked_fill", "exp", "sum", "matmul", "tril", "triu",
                 "unsqueeze", "mean", "reshape", "view"}


def swap_calls(source: str) -> str:
    """Equivalent tensor calls written the other way: ``x.softmax(-1)`` as ``torch.softmax(x, -1)``
    and back (``F.softmax`` too), ``view`` as ``reshape`` (the same tensor, always valid)."""
    tree = ast.parse(source)

    class S(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if not (isinstance(f, ast.Attribute) and f.attr in SWAPPED_CALLS):
                return node
            attr = "reshape" if f.attr == "view" else f.attr
            module = isinstance(f.value, ast.Name) and f.value.id in ("torch", "F")
            if module and node.args:                     # torch.f(x, ...) -> x.f(...)
                return ast.Call(func=ast.Attribute(value=node.args[0], attr=attr, ctx=ast.Load()),
                                args=node.args[1:], keywords=node.keywords)
            if not module and not (isinstance(f.value, ast.Name) and f.value.id in ("self", "nn", "np")):
                return ast.Call(func=ast.Attribute(value=ast.Name("torch", ast.Load()), attr=attr,
                                                   ctx=ast.Load()),
                                args=[f.value, *node.args], keywords=node.keywords)
            return node

    return ast.unparse(ast.fix_missing_locations(S().visit(tree))) + "\n"


DISGUISES = {
    "renamed": [rename],
    "reordered": [reorder],
    "comments and blank lines": [recomment],
    "@ and torch.matmul": [swap_matmul],
    "all four": [rename, swap_matmul, reorder, recomment],
}


def disguise(cells: dict[str, str], how: list, shuffle_cells: bool = False) -> dict[str, str]:
    out = {}
    for piece, src in cells.items():
        for f in how:
            src = f(src) if src.strip() else src
        out[piece] = src
    if shuffle_cells:            # q1's five cells in reverse order (names are looked up when called)
        q1 = ["Attention", "Head", "MultiHead", "Block", "MyTransformer"]
        texts = [out[p] for p in q1][::-1]
        out.update({f"@{CELLS[p]}": t for p, t in zip(q1, texts, strict=True)})
        for p in q1:
            del out[p]
    return out


# ---------------------------------------------------------------- the class

def honest_cells(choice: dict[str, int]) -> dict[str, str]:
    return {p: ANSWERS[p][i] for p, i in choice.items()}


def master_cells() -> dict[str, str]:
    """The master's answers (last year's published solution), by piece."""
    from autograder.similarity import master_answers
    by_cell = {c["cell"]: c["source"] for c in master_answers(NAME)}
    out = {}
    for src in by_cell.values():
        for piece in PIECES:
            if piece in ("plot", "q3"):
                continue
            if f"def {piece}(" in src or f"class {piece}(" in src:
                out[piece] = src
        if "causal_same = " in src:
            out["q3"] = src + "\n" + Q3_PRINT
        if "plt.matshow" in src:
            out["plot"] = src
    assert len(out) == len(PIECES), sorted(out)
    return out


def notebook(cells: dict[str, str]) -> dict:
    """The blank student notebook with these answer cells filled in (``@N`` keys: cell N)."""
    nb = json.loads((ROOT / "notebooks" / f"{NAME}.ipynb").read_text(encoding="utf-8"))
    for piece, src in cells.items():
        index = int(piece[1:]) if piece.startswith("@") else CELLS[piece]
        nb["cells"][index]["source"] = src
    return nb


def build_class(n_honest: int = 30, seed: int = 0) -> tuple[dict[str, dict], dict[str, str], set[frozenset]]:
    """(notebooks by file name, how each copy was disguised, the copied pairs). The copies: one per
    disguise of an honest student's notebook, one of q1 and q4 only (renamed; the rest its own), and
    one of the master's answers, renamed (flagged as similarity to the master, not as a pair)."""
    choices = honest_choices(n_honest, seed)
    books = {f"honest{i:02d}.ipynb": notebook(honest_cells(c)) for i, c in enumerate(choices)}
    how: dict[str, str] = {}
    pairs: set[frozenset] = set()
    for j, (label, fs) in enumerate(DISGUISES.items()):
        source = f"honest{3 * j + 1:02d}.ipynb"
        name = f"copy{j}-{re.sub(r'[^a-z]+', '-', label).strip('-')}.ipynb"
        cells = disguise(honest_cells(choices[3 * j + 1]), fs, shuffle_cells=label == "reordered")
        books[name] = notebook(cells)
        how[name] = label
        pairs.add(frozenset((name, source)))
    # a partial copy: q1 and q4 of one student, renamed; q3 and the plot its own
    source = "honest20.ipynb"
    own = copy.deepcopy(choices[20])
    mine = honest_cells(own)
    theirs = disguise({p: mine[p] for p in CELLS if p not in ("q3", "plot")}, [rename, recomment])
    other = choices[21]
    theirs["q3"] = ANSWERS["q3"][(other["q3"] + 1) % len(ANSWERS["q3"])]
    theirs["plot"] = ANSWERS["plot"][(other["plot"] + 1) % len(ANSWERS["plot"])]
    books["copy5-q1-and-q4-only.ipynb"] = notebook(theirs)
    how["copy5-q1-and-q4-only.ipynb"] = "q1 and q4 only, renamed and recommented"
    pairs.add(frozenset(("copy5-q1-and-q4-only.ipynb", source)))
    books["master-renamed.ipynb"] = notebook(disguise(master_cells(), [rename, recomment]))
    how["master-renamed.ipynb"] = "the master's answers, renamed and recommented"
    return books, how, pairs


def write_class(folder: Path, **kw) -> tuple[dict[str, str], set[frozenset]]:
    folder.mkdir(parents=True, exist_ok=True)
    books, how, pairs = build_class(**kw)
    for name, nb in books.items():
        (folder / name).write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return how, pairs


def answer_rows(books: dict[str, dict]) -> list[dict]:
    """What course grade keeps of each notebook (results/<stem>.json's answer_code), without grading."""
    from autograder.assignment import load
    from autograder.similarity import answer_code
    course = load(NAME).given_code
    return [{"file": name, "id": "", "answer_code": answer_code(nb, course)}
            for name, nb in sorted(books.items())]
