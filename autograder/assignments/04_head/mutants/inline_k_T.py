# question: q1
# expect: fail
# replaces: Head
# why: inline attention with k.T (reverses all dims): fine on one sentence, wrong on a batch
# says: transposes the keys with k.T, which is right for one sentence but reverses every axis of a batch (k.transpose(-2, -1) swaps only the last two)
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.head_dim = head_dim

    def forward(self, x):
        q, k, v = self.Q(x), self.K(x), self.V(x)
        weights = torch.softmax(q @ k.T / self.head_dim ** 0.5, dim=-1)
        self.weights = weights.detach()
        return weights @ v
