# question: q2
# expect: fail
# replaces: MultiHead
# why: gives the first head x but every other head 1.5 * x (not every head the same x)
# says: does not give every head the same x
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        outs = []
        h = x
        for head in self.heads:
            outs.append(head(h))
            h = x * 1.5
        return self.mix(torch.cat(outs, dim=-1))
