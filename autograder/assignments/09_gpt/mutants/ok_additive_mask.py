# question: q2
# expect: pass
# replaces: SelfAttention
# why: keeps the mask as energies to add: 0 where allowed, -inf above the diagonal
class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.drop = nn.Dropout(cfg.dropout)
        future = torch.ones(cfg.context, cfg.context, dtype=torch.bool).triu(1)
        self.register_buffer("mask", torch.zeros(cfg.context, cfg.context).masked_fill(future, -math.inf))

    def forward(self, x):
        B, T, D = x.shape
        d = D // self.heads
        q, k, v = self.qkv(x).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.heads, d).transpose(1, 2) for t in (q, k, v))
        dots = q @ k.transpose(-2, -1) / math.sqrt(d) + self.mask[:T, :T]
        y = dots.softmax(dim=-1) @ v
        return self.drop(self.out(y.transpose(1, 2).contiguous().view(B, T, D)))
