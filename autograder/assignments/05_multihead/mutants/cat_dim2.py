# question: q2
# expect: fail
# replaces: MultiHead
# why: joins the heads with torch.cat(..., dim=2): right for a batch, an error for one sentence (L, dim)
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=2))
