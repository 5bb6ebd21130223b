# question: q1
# expect: fail
# replaces: Head
# why: breaks the rules: hands the attention to F.scaled_dot_product_attention
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        q, k, v = self.Q(x), self.K(x), self.V(x)
        _, weights = Attention(q, k, v)
        self.weights = weights.detach()
        return F.scaled_dot_product_attention(q, k, v)
