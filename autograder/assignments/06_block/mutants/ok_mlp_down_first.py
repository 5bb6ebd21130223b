# question: q2
# expect: pass
# replaces: Block
# why: the mlp as a class that registers its narrowing layer before its widening one, and calls F.gelu
class FeedForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.down = nn.Linear(4 * dim, dim)
        self.up = nn.Linear(dim, 4 * dim)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.mlp = FeedForward(dim)
        self.attention = MultiHead(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.norm1 = nn.LayerNorm(dim)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))
