# question: q2
# replaces: MultiHead
# why: the ModuleList filled with append in a loop, the outputs gathered in a loop
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        head_dim = dim // heads
        self.heads = nn.ModuleList()
        for _ in range(heads):
            self.heads.append(Head(dim, head_dim))
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        outputs = []
        for head in self.heads:
            outputs.append(head(x))
        joined = torch.concat(outputs, dim=x.dim() - 1)
        return self.mix(joined)
