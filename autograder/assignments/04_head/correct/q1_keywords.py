# question: q1
# replaces: Head
# why: layers made with keyword arguments, the weights kept with torch.no_grad and clone
class Head(nn.Module):
    def __init__(self, dim, head_dim):
        super().__init__()
        self.Q = nn.Linear(in_features=dim, out_features=head_dim, bias=False)
        self.K = nn.Linear(in_features=dim, out_features=head_dim, bias=False)
        self.V = nn.Linear(in_features=dim, out_features=head_dim, bias=False)

    def forward(self, x):
        queries = self.Q(x)
        keys = self.K(x)
        values = self.V(x)
        result = Attention(queries, keys, values)
        with torch.no_grad():
            self.weights = result[1].clone()
        return result[0]
