# question: q1
# expect: fail
# replaces: Head
# why: returns what Attention returns, the pair (out, weights), instead of out (and keeps no weights): MultiHead, Block and MyTransformer still keep their points for handing the switch on and doing their own work
class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = causal

    def forward(self, x):
        return Attention(self.Q(x), self.K(x), self.V(x), causal=self.causal)
