# question: q2
# expect: pass
# replaces: MultiHead
# why: the GIVEN Attention, Head and MultiHead were changed (no scale, biases in the heads, mix without bias); the Block itself is right, so it keeps full marks
def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return weights @ v, weights


class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim)
        self.K = nn.Linear(dim, head_dim)
        self.V = nn.Linear(dim, head_dim)

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.K(x), self.V(x))
        self.weights = weights.detach()
        return out


class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
