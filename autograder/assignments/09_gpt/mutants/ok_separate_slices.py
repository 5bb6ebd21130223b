# question: q2
# expect: pass
# replaces: SelfAttention
# why: cuts q, k, v out of qkv by slicing, and joins the heads with reshape
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
        qkv = self.qkv(x)
        q = qkv[..., :D].reshape(B, T, H, D // H).transpose(1, 2)
        k = qkv[..., D:2 * D].reshape(B, T, H, D // H).transpose(1, 2)
        v = qkv[..., 2 * D:].reshape(B, T, H, D // H).transpose(1, 2)
        dots = (q @ k.transpose(-2, -1)) * (D // H) ** -0.5
        dots = dots.masked_fill(self.mask[:T, :T].logical_not(), float("-inf"))
        y = torch.softmax(dots, dim=-1) @ v
        return self.drop(self.out(y.transpose(1, 2).reshape(B, T, D)))
