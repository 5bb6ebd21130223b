# question: q1
# expect: fail
# replaces: Head
# why: returns the values v instead of what Attention made of them
# says: returns the values V(x) instead of what Attention made of them
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        v = self.V(x)
        out, weights = Attention(self.Q(x), self.K(x), v)
        self.weights = weights.detach()
        return v
