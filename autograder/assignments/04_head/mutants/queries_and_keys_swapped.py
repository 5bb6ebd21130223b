# question: q1
# expect: fail
# replaces: Head
# why: passes keys and queries in the wrong order: Attention(K(x), Q(x), V(x))
# says: hands Attention the keys as queries and the queries as keys (Attention(K(x), Q(x), V(x)))
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        k, q, v = self.Q(x), self.K(x), self.V(x)
        out, weights = Attention(q, k, v)
        self.weights = weights.detach()
        return out
