# question: q1
# expect: pass
# replaces: Head
# why: projects with F.linear and writes the attention with einsum and softmax, without calling Attention
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        q = F.linear(x, self.Q.weight)
        k = F.linear(x, self.K.weight)
        v = F.linear(x, self.V.weight)
        scores = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5
        weights = scores.softmax(dim=-1)
        self.weights = weights.detach()
        return torch.einsum("...ij,...jd->...id", weights, v)
