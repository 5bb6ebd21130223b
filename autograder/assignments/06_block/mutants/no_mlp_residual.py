# question: q2
# expect: fail
# replaces: Block
# why: replaces x by the mlp output instead of adding to it
# says: replaces x by the MLP's output instead of adding it to x (the residual connection around the MLP is missing)
class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return self.mlp(self.norm2(x))
