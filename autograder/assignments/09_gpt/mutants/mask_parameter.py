# question: q2
# expect: fail
# replaces: SelfAttention
# why: keeps the mask as an nn.Parameter (counted, and handed to the optimizer) instead of a buffer
class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.drop = nn.Dropout(cfg.dropout)
        self.mask = nn.Parameter(torch.tril(torch.ones(cfg.context, cfg.context)), requires_grad=False)

    def forward(self, x):
        B, T, D = x.shape
        d = D // self.heads
        q, k, v = self.qkv(x).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.heads, d).transpose(1, 2) for t in (q, k, v))
        dots = q @ k.transpose(-2, -1) / math.sqrt(d)
        dots = dots.masked_fill(self.mask[:T, :T] == 0, -math.inf)
        y = dots.softmax(dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, D)
        return self.drop(self.out(y))
