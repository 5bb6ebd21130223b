# question: q1
# expect: fail
# replaces: Head
# why: copy-paste slip: the keys are made with self.Q, so K is never used
# hint: head.weights does not change when K changes
# says: makes the keys with self.Q instead of self.K, so the keys are the queries
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.Q(x), self.V(x))
        self.weights = weights.detach()
        return out
