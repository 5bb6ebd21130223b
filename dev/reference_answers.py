# The reference answers of the course, one block per notebook, as the master notebooks' solution
# cells hold them. Authors of solutions/*.ipynb copy these blocks into their solution cells
# verbatim (tag the cell "reference"): `course build` re-uses them as GIVEN code in later notebooks.
# This file is a scratch pad for the authors and is deleted once the masters exist.

# ---- 01_no_talking -----------------------------------------------------------------------------
def TrainTwoSentences(net, steps=1500):
    """Train `net` on batches of 64 two-sentence samples with DiffusionLoss; return the losses."""
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    losses = []
    for step in tqdm(range(steps), desc=type(net).__name__, mininterval=1.0):
        opt.zero_grad()
        x_0 = torch.stack([SamplePInit() for b in range(64)])   # a batch of 64 sentences
        loss = DiffusionLoss(net, x_0, MASK)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses

# ---- 02_with_position --------------------------------------------------------------------------
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)           # what: one vector per token
        self.position = nn.Embedding(max_length, dim)        # where: one vector per position
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):                                    # x: (batch, L) or (L,)
        positions = torch.arange(x.shape[-1], device=x.device)
        h = self.embed(x) + self.position(positions)         # (batch, L, dim) + (L, dim)
        return self.out(h)

# ---- 03_attention ------------------------------------------------------------------------------
def Attention(q, k, v):
    dots = q @ k.transpose(-2, -1)                           # dots[i, j] = q_i . k_j
    weights = torch.softmax(dots / math.sqrt(q.shape[-1]), dim=-1)   # Boltzmann over j
    return weights @ v, weights

# ---- 04_head -----------------------------------------------------------------------------------
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.K(x), self.V(x))
        self.weights = weights.detach()                      # a copy to look at later
        return out

# ---- 05_multihead ------------------------------------------------------------------------------
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))

# ---- 06_block ----------------------------------------------------------------------------------
class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))                # talk
        x = x + self.mlp(self.norm2(x))                      # think
        return x

# ---- 07_my_transformer -------------------------------------------------------------------------
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        h = self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device))
        for block in self.blocks:
            h = block(h)
        return self.out(self.norm(h))

# ---- 08_causal ---------------------------------------------------------------------------------
def Attention(q, k, v, causal=False):
    energy = -(q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])    # E_ij
    if causal:
        L = q.shape[-2]
        future = torch.triu(torch.ones(L, L, dtype=torch.bool, device=q.device), diagonal=1)
        energy = energy.masked_fill(future, math.inf)               # site i may not hear j > i
    weights = torch.softmax(-energy, dim=-1)
    return weights @ v, weights

class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = causal

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.K(x), self.V(x), causal=self.causal)
        self.weights = weights.detach()
        return out

class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads, causal) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))

class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads, causal)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x

class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, causal) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        h = self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device))
        for block in self.blocks:
            h = block(h)
        return self.out(self.norm(h))

@torch.no_grad()
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    x = StoryTokens(start)
    device = next(net.parameters()).device
    while len(x) < L:
        logits = net(x[None].to(device))[0, -1].cpu()          # the guess for the next token
        logits[[STORY_MASK, STORY_UNK]] = -math.inf
        p = torch.softmax(logits / temperature, dim=-1)
        x = torch.cat([x, torch.multinomial(p, 1)])
    return StoryText(x)
