# question: q1
# expect: fail
# replaces: Head
# why: never calls Attention (returns its values, self.V(x), with no talking between sites, and keeps the identity as weights): MultiHead, Block and MyTransformer still keep their points for handing the switch on and doing their own work
# says: never calls Attention: it returns its values V(x), so the sites do not talk
class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = causal

    def forward(self, x):
        L = x.shape[-2]
        self.weights = torch.eye(L, device=x.device).expand(*x.shape[:-1], L)
        return self.V(x)
