# question: q1
# expect: fail
# replaces: Head
# why: copy-paste slip: values made with self.K instead of self.V (V unused)
# says: makes the values with self.K instead of self.V
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        q = self.Q(x)
        k = self.K(x)
        v = self.K(x)
        out, weights = Attention(q, k, v)
        self.weights = weights.detach()
        return out
