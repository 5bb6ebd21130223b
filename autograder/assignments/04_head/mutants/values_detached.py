# question: q1
# expect: fail
# replaces: Head
# why: detaches the values v, so the output is right but V never gets a gradient
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.K(x), self.V(x).detach())
        self.weights = weights.detach()
        return out
