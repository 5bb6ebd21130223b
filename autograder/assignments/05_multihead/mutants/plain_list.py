# question: q2
# expect: fail
# replaces: MultiHead
# why: keeps the heads in a plain Python list, so PyTorch never finds (or trains) their matrices
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = [Head(dim, dim // heads) for h in range(heads)]
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
