# question: q2
# expect: fail
# replaces: MultiHead
# why: gives every head head_dim = dim instead of dim // heads (and widens mix to make it fit)
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim) for h in range(heads)])
        self.mix = nn.Linear(heads * dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
