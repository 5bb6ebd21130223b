# question: q1
# expect: pass
# replaces: Head
# why: makes the three layers in a loop with setattr and calls them by name
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        for name in "QKV":
            setattr(self, name, nn.Linear(dim, head_dim, bias=False))

    def forward(self, x):
        q, k, v = (getattr(self, name)(x) for name in "QKV")
        out, w = Attention(q, k, v)
        self.weights = w.detach().cpu()
        return out
