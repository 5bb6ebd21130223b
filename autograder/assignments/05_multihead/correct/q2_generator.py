# question: q2
# replaces: MultiHead
# why: the ModuleList from a generator, the heads mapped with map and joined with torch.cat(tuple)
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList(Head(dim, dim // heads) for h in range(heads))
        self.mix = nn.Linear(in_features=dim, out_features=dim, bias=True)

    def forward(self, x):
        return self.mix(torch.cat(tuple(map(lambda head: head(x), self.heads)), -1))
