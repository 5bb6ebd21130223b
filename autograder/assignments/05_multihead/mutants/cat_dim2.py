# question: q2
# expect: fail
# replaces: MultiHead
# why: joins the heads with torch.cat(..., dim=2): right for a batch, an error for one sentence (L, dim)
# says: joins the heads with torch.cat(..., dim=2), which works for a batch but fails for one sentence of shape (L, dim): join them on the last axis (dim=-1)
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=2))
