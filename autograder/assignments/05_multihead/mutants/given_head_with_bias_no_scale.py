# question: q2
# expect: pass
# replaces: Head
# why: the GIVEN Attention and Head were changed (no scale, biases on Q, K, V); the MultiHead itself is right, so it keeps full marks
def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return weights @ v, weights


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
