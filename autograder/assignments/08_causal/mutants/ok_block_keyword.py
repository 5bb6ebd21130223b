# question: q1
# expect: pass
# replaces: Block
# why: passes causal on by keyword and writes the forward with temporary names
class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads, causal=causal)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        talked = x + self.attention(self.norm1(x))
        return talked + self.mlp(self.norm2(talked))
