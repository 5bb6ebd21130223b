# question: q1
# expect: pass
# replaces: Head
# why: applies the three matrices with F.linear, keeps the switch under the page's name and hands it on by keyword
class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.causal = bool(causal)
        self.Q, self.K, self.V = (nn.Linear(dim, head_dim, bias=False) for _ in range(3))

    def forward(self, x):
        q, k, v = (F.linear(x, m.weight) for m in (self.Q, self.K, self.V))
        out, weights = Attention(q, k, v, causal=self.causal)
        self.weights = weights.detach().clone()
        return out
