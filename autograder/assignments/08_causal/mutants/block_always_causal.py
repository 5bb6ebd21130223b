# question: q1
# expect: fail
# replaces: Block
# why: makes its MultiHead with causal=True whatever the argument says
# says: makes its MultiHead causal whatever causal says
class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads, True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x
