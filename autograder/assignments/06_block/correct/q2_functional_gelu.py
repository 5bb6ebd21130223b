# question: q2
# replaces: Block
# why: the MLP's two layers in a ModuleList with F.gelu between them in the MLP's own forward
class TwoLayers(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, hidden), nn.Linear(hidden, dim)])

    def forward(self, x):
        return self.layers[1](F.gelu(self.layers[0](x)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.mlp = TwoLayers(dim, 4 * dim)

    def forward(self, x):
        h = x + self.attention(self.norm1(x))
        return h + self.mlp(self.norm2(h))
