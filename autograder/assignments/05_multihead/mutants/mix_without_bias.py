# question: q2
# expect: fail
# replaces: MultiHead
# why: mix made without its bias (the page's mix is an ordinary nn.Linear(dim, dim))
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
