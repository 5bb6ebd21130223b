# question: q1
# expect: fail
# replaces: Head
# why: leaves the biases on (nn.Linear's default): 3 * head_dim extra numbers and q = Qx + b
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
