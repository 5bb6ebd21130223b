# question: q2
# expect: fail
# replaces: MultiHead
# why: makes self.mix but forgets to apply it
# says: makes self.mix but never applies it to the joined heads
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
