# question: q2
# expect: pass
# replaces: MultiHead
# why: computes all heads at once with one stacked matrix and a reshape (like TinyDenoiser)
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        H = len(self.heads)
        def split(W):                                          # (..., L, H * hd) -> (..., H, L, hd)
            y = x @ W.T
            return y.reshape(*y.shape[:-1], H, -1).transpose(-3, -2)
        q = split(torch.cat([h.Q.weight for h in self.heads]))
        k = split(torch.cat([h.K.weight for h in self.heads]))
        v = split(torch.cat([h.V.weight for h in self.heads]))
        out, weights = Attention(q, k, v)                      # every head in one call
        for i, h in enumerate(self.heads):
            h.weights = weights[..., i, :, :].detach()
        out = out.transpose(-3, -2)                            # (..., L, H, hd)
        return self.mix(out.reshape(*out.shape[:-2], -1))
