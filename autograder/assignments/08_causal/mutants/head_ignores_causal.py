# question: q1
# expect: fail
# replaces: Head
# why: takes causal but never saves it or passes it to Attention
# says: takes causal but never passes it on to Attention, so it never masks
class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.K(x), self.V(x))
        self.weights = weights.detach()
        return out
