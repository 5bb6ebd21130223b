# question: q1
# expect: fail
# replaces: Head
# why: writes the attention inline and divides by sqrt(dim) instead of sqrt(head_dim)
# hint: divide by sqrt(head_dim)
# says: divides by the square root of dim (the input width) instead of head_dim (the length of the query vectors)
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.dim = dim
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        q, k, v = self.Q(x), self.K(x), self.V(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.dim), dim=-1)
        self.weights = weights.detach()
        return weights @ v
