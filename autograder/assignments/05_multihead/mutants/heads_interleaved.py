# question: q2
# expect: fail
# replaces: MultiHead
# why: stacks the heads on a new last index and flattens, which interleaves their components
# says: interleaves the heads' components (stacking them on a new last axis, then flattening) instead of putting each head's output side by side
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.stack([head(x) for head in self.heads], dim=-1).flatten(-2))
