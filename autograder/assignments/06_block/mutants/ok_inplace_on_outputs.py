# question: q2
# expect: pass
# replaces: Block
# why: adds the residuals in place, but onto the pieces' fresh outputs (y += x), never onto the caller's x or a tensor kept for backward
class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        talked = self.attention(self.norm1(x))
        talked += x
        thought = self.mlp(self.norm2(talked))
        thought += talked
        return thought
