# question: q1
# expect: pass
# replaces: Head
# why: a helper function makes q, k, v; Attention is called with keyword arguments; the weights are saved as a detached clone
def project(layers, x):
    return [layer(x) for layer in layers]


class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q, self.K, self.V = (nn.Linear(dim, head_dim, bias=False) for _ in range(3))

    def forward(self, x):
        q, k, v = project((self.Q, self.K, self.V), x)
        result = Attention(q=q, k=k, v=v)
        self.weights = result[1].detach().clone()
        return result[0]
