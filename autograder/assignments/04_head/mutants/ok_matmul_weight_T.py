# question: q1
# expect: pass
# replaces: Head
# why: multiplies by the matrices by hand (x @ W.T) and writes the attention out in full
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.head_dim = head_dim

    def forward(self, x):
        q = x @ self.Q.weight.T
        k = x @ self.K.weight.T
        v = x @ self.V.weight.T
        energy = -torch.einsum("...id,...jd->...ij", q, k) / self.head_dim ** 0.5
        weights = torch.exp(-energy - (-energy).amax(dim=-1, keepdim=True))
        weights = weights / weights.sum(dim=-1, keepdim=True)
        with torch.no_grad():
            self.weights = weights.clone()
        return weights @ v
