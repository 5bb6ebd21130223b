# question: q1
# replaces: Attention, Head, MultiHead, Block, MyTransformer
# why: all five pieces in one cell: a where() mask, Q/K/V made with setattr, heads appended in a
# loop, the MLP's hidden width named, the blocks in an nn.Sequential
def Attention(q, k, v, causal=False):
    scores = torch.einsum("...id,...jd->...ij", q, k) / math.sqrt(q.shape[-1])
    if causal:
        n = scores.shape[-1]
        future = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(diagonal=1)
        scores = torch.where(future, torch.full_like(scores, -math.inf), scores)
    weights = torch.softmax(scores, -1)
    return torch.einsum("...ij,...jd->...id", weights, v), weights


class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        for name in "QKV":
            setattr(self, name, nn.Linear(dim, head_dim, bias=False))
        self.causal = causal

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.K(x), self.V(x), self.causal)
        self.weights = weights.detach()
        return out


class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(heads):
            self.heads.append(Head(dim, dim // heads, causal=causal))
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))


class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        hidden = 4 * dim
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads, causal=causal)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads, causal=causal) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        h = self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device))
        return self.out(self.norm(self.blocks(h)))
