# question: q4
# replaces: list_params
# why: the ListMultiHead written with a loop, its count taken with named_parameters
class ListMultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = []                       # a plain Python list: PyTorch does not see these
        for h in range(heads):
            self.heads.append(Head(dim, dim // heads))
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))


list_params = sum(p.numel() for _, p in ListMultiHead(32, 4).named_parameters())
print(list_params)
