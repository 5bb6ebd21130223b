# question: q2
# expect: fail
# replaces: MultiHead
# why: averages the heads' outputs instead of gluing them side by side (mix made to fit)
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim // heads, dim)

    def forward(self, x):
        return self.mix(torch.stack([head(x) for head in self.heads]).mean(dim=0))
