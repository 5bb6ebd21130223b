# question: q2
# expect: fail
# replaces: MultiHead
# why: computes all heads at once with one stacked matrix but never stores each head's weights
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        H = len(self.heads)
        def split(W):
            y = x @ W.T
            return y.reshape(*y.shape[:-1], H, -1).transpose(-3, -2)
        q = split(torch.cat([h.Q.weight for h in self.heads]))
        k = split(torch.cat([h.K.weight for h in self.heads]))
        v = split(torch.cat([h.V.weight for h in self.heads]))
        out, weights = Attention(q, k, v)
        out = out.transpose(-3, -2)
        return self.mix(out.reshape(*out.shape[:-2], -1))
