# question: q1
# expect: fail
# replaces: Head
# why: writes the attention inline with a softmax over dim=1: right for one sentence, wrong for a batch
# says: takes the softmax over dim=1, which is right for one sentence but in a batch runs over the query sites instead of the key sites (dim=-1)
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        q, k, v = self.Q(x), self.K(x), self.V(x)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=1)
        self.weights = weights.detach()
        return weights @ v
