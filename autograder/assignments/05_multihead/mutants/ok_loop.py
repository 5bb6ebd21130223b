# question: q2
# expect: pass
# replaces: MultiHead
# why: builds the ModuleList with append and joins the heads in a for loop
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList()
        for h in range(heads):
            self.heads.append(Head(dim, dim // heads))
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        outputs = []
        for head in self.heads:
            outputs.append(head(x))
        joined = outputs[0]
        for o in outputs[1:]:
            joined = torch.cat((joined, o), -1)
        return self.mix(joined)
