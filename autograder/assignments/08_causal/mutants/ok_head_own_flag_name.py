# question: q1
# expect: pass
# replaces: Head
# why: keeps the switch under another name and hands it to Attention positionally
class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.look_left_only = bool(causal)

    def forward(self, x):
        q, k, v = self.Q(x), self.K(x), self.V(x)
        out, weights = Attention(q, k, v, self.look_left_only)
        self.weights = weights.detach()
        return out
