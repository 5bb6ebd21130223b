# question: q2
# expect: pass
# replaces: Block
# why: normalises with F.layer_norm on the norms' own scale and shift, runs the mlp's layers with F.linear and F.gelu, adds with torch.add
class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def _norm(self, norm, x):
        return F.layer_norm(x, x.shape[-1:], norm.weight, norm.bias, norm.eps)

    def forward(self, x):
        x = torch.add(x, self.attention(self._norm(self.norm1, x)))
        up, down = self.mlp[0], self.mlp[2]
        hidden = F.gelu(F.linear(self._norm(self.norm2, x), up.weight, up.bias))
        return torch.add(x, F.linear(hidden, down.weight, down.bias))
