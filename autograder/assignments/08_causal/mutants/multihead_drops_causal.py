# question: q1
# expect: fail
# replaces: MultiHead
# why: takes causal but makes its heads without it
# says: takes causal but makes its heads without it, so it never masks
class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
