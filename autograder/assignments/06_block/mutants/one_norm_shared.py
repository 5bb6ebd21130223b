# question: q2
# expect: fail
# replaces: Block
# why: one LayerNorm object used for both norms (shared scale and shift)
class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = self.norm2 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x
