# question: q2
# replaces: SelfAttention
# why: a loop over the heads (each one's columns sliced out) instead of one batched matmul, chunk
# for q, k, v, F.dropout(x, p, self.training) instead of nn.Dropout
class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.p = cfg.dropout
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.register_buffer("mask", torch.ones(cfg.context, cfg.context).tril().bool())

    def forward(self, x):
        B, T, D = x.shape
        d = D // self.heads
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        outs = []
        for h in range(self.heads):
            cols = slice(h * d, (h + 1) * d)
            s = q[..., cols] @ k[..., cols].transpose(-2, -1) / math.sqrt(d)
            s = s.masked_fill(~self.mask[:T, :T], float("-inf"))
            outs.append(torch.softmax(s, dim=-1) @ v[..., cols])
        y = torch.cat(outs, dim=-1)
        return F.dropout(self.out(y), self.p, self.training)
