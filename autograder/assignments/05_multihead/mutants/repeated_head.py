# question: q2
# expect: fail
# replaces: MultiHead
# why: [Head(...)] * heads repeats one head, so all heads share the same matrices
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads)] * heads)
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
