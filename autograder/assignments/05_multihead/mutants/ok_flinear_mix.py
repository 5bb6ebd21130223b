# question: q2
# expect: pass
# replaces: MultiHead
# why: calls the heads with map, joins them in a helper function and applies mix with F.linear on its weight and bias
def side_by_side(pieces):
    return torch.cat(tuple(pieces), -1)


class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList(Head(dim, dim // heads) for _ in range(heads))
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        joined = side_by_side(map(lambda head: head(x), self.heads))
        return F.linear(joined, self.mix.weight, self.mix.bias)
