# question: q2
# expect: fail
# replaces: MultiHead
# why: stacks the heads on a new last index and flattens, which interleaves their components
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.stack([head(x) for head in self.heads], dim=-1).flatten(-2))
