# question: q1
# replaces: Head
# why: Q, K and V made in a loop with setattr and read back with getattr
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        for name in ("Q", "K", "V"):
            setattr(self, name, nn.Linear(dim, head_dim, bias=False))

    def forward(self, x):
        q, k, v = [getattr(self, name)(x) for name in ("Q", "K", "V")]
        out, weights = Attention(q, k, v)
        self.weights = weights.detach()
        return out
