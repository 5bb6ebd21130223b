# question: q2
# expect: pass
# replaces: Block
# why: the mlp as a small class of its own (two Linears and F.gelu) instead of nn.Sequential
class FeedForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.wide = nn.Linear(dim, 4 * dim)
        self.narrow = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.narrow(F.gelu(self.wide(x)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.mlp = FeedForward(dim)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))
