# question: q1
# expect: fail
# replaces: Head
# why: the switch is on by default (causal=True): Head(dim, head_dim) is causal
# says: is causal by default (causal=True), so Head(dim, head_dim) no longer lets every site listen to every other
class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=True):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = causal

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.K(x), self.V(x), causal=self.causal)
        self.weights = weights.detach()
        return out
