# question: q1
# expect: pass
# replaces: MultiHead
# why: makes the heads without the switch and then sets each head's self.causal
class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for h in range(heads):
            head = Head(dim, dim // heads)
            head.causal = causal
            self.heads.append(head)
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
