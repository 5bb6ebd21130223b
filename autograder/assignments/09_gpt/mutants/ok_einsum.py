# question: q2
# expect: pass
# replaces: SelfAttention
# why: computes the dot products and the weighted sums with einsum, the heads as an index of their own
class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.drop = nn.Dropout(cfg.dropout)
        self.register_buffer("mask", torch.tril(torch.ones(cfg.context, cfg.context, dtype=torch.bool)))

    def forward(self, x):
        B, T, D = x.shape
        H = self.heads
        q, k, v = (t.reshape(B, T, H, D // H) for t in self.qkv(x).split(D, dim=-1))
        dots = torch.einsum("bihc,bjhc->bhij", q, k) / math.sqrt(D // H)
        dots = dots.masked_fill(~self.mask[:T, :T], -math.inf)
        y = torch.einsum("bhij,bjhc->bihc", dots.softmax(dim=-1), v)
        return self.drop(self.out(y.reshape(B, T, D)))
