# question: q2
# replaces: Block
# why: the MLP as an nn.Sequential with the hidden width named, and a forward without reassignment
class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        hidden = 4 * dim
        self.norm1 = nn.LayerNorm(normalized_shape=dim)
        self.attention = MultiHead(dim, heads)
        self.norm2 = nn.LayerNorm(normalized_shape=dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, hidden),
            nn.GELU(),
            nn.Linear(hidden, dim),
        )

    def forward(self, x):
        after_talking = x + self.attention(self.norm1(x))
        after_thinking = after_talking + self.mlp(self.norm2(after_talking))
        return after_thinking
