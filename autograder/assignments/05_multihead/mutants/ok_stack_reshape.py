# question: q2
# expect: pass
# replaces: MultiHead
# why: joins the heads with torch.stack on a new index before the last, then reshapes (same as cat)
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        joined = torch.stack([head(x) for head in self.heads], dim=-2)      # (..., L, heads, head_dim)
        return self.mix(joined.reshape(*x.shape[:-1], -1))
