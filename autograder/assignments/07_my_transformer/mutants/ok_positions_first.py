# question: q1
# expect: pass
# replaces: MyTransformer
# why: adds the token vectors to the position vectors (positions first), keeps the pieces in another order and runs the blocks with a while loop
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.position = nn.Embedding(max_length, dim)
        self.embed = nn.Embedding(vocab_size, dim)
        self.out = nn.Linear(dim, vocab_size)
        self.norm = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        SmallStart(self)

    def forward(self, x):
        where = self.position.weight[torch.arange(x.shape[-1], device=x.device)]
        h = where + self.embed(x)
        i = 0
        while i < len(self.blocks):
            h = self.blocks[i](h)
            i += 1
        h = self.norm(h)
        return self.out(h)
