# question: q2
# expect: fail
# replaces: Block
# why: post-norm: normalises after adding (the original 2017 transformer) instead of before
# says: normalises after adding (post-norm, as the 2017 transformer did) instead of normalising the input of each part (pre-norm)
class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = self.norm1(x + self.attention(x))
        x = self.norm2(x + self.mlp(x))
        return x
