# question: q1
# expect: fail
# replaces: Head
# why: one wrong line when adding the switch: hands K(x) to Attention twice, for the keys and the values
# says: hands K(x) to Attention for the values too, instead of V(x)
class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = causal

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.K(x), self.K(x), causal=self.causal)
        self.weights = weights.detach()
        return out
