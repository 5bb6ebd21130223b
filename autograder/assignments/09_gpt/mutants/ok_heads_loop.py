# question: q2
# expect: pass
# replaces: SelfAttention
# why: an explicit loop over the heads, each with its own slice of q, k and v, joined with torch.cat
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
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        outs = []
        for h in range(self.heads):
            part = slice(h * d, (h + 1) * d)
            dots = torch.baddbmm(torch.zeros(B, T, T, dtype=x.dtype, device=x.device),
                                 q[..., part], k[..., part].transpose(1, 2), alpha=1 / math.sqrt(d))
            dots = dots.masked_fill(~self.mask[:T, :T], float("-inf"))
            outs.append(dots.softmax(dim=-1) @ v[..., part])
        return self.drop(self.out(torch.cat(outs, dim=-1)))
