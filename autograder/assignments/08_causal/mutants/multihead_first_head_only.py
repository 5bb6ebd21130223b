# question: q1
# expect: fail
# replaces: MultiHead
# why: hands causal to the first head only
# says: hands causal to its first head only
class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads, causal and h == 0) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
