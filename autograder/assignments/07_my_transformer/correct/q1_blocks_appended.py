# question: q1
# replaces: MyTransformer
# why: the blocks appended in a loop, the forward going through them by index
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(Block(dim, heads))
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        h = self.embed(x) + self.position.weight[: x.shape[-1]]
        for i in range(len(self.blocks)):
            h = self.blocks[i](h)
        return self.out(self.norm(h))
