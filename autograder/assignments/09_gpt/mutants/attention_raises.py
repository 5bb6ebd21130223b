# question: q2
# expect: fail
# replaces: SelfAttention
# why: splits qkv along the wrong index, so forward raises (its blocks and GPT are checked with the chapter's attention: q4 and q5 keep their points, and init_weights is not blamed)
# hint: raised ValueError at `q, k, v = self.qkv(x).split(D, dim=1)`
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
        d = D // self.heads
        q, k, v = self.qkv(x).split(D, dim=1)
        q, k, v = (t.view(B, T, self.heads, d).transpose(1, 2) for t in (q, k, v))
        dots = q @ k.transpose(-2, -1) / math.sqrt(d)
        dots = dots.masked_fill(~self.mask[:T, :T], -math.inf)
        y = dots.softmax(dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, D)
        return self.drop(self.out(y))
