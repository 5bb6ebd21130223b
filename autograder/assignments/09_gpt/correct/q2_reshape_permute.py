# question: q2
# replaces: SelfAttention
# why: reshape and permute for the heads, a float mask buffer compared with 0, nn.Dropout
class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.drop = nn.Dropout(p=cfg.dropout)
        self.register_buffer("mask", torch.tril(torch.ones(cfg.context, cfg.context)))

    def forward(self, x):
        B, T, D = x.shape
        H = self.heads
        qkv = self.qkv(x).reshape(B, T, 3, H, D // H).permute(2, 0, 3, 1, 4)    # (3, B, H, T, d)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).permute(0, 2, 1, 3).reshape(B, T, D)
        return self.drop(self.out(y))
