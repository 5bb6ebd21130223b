# question: q2
# replaces: Block
# why: the MLP as a class of the student's own (up, GELU module, down), the residuals written out
class FeedForward(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = FeedForward(dim)

    def forward(self, x):
        talked = self.attention(self.norm1(x))
        x = x + talked
        thought = self.mlp(self.norm2(x))
        return x + thought
