# question: q1
# expect: pass
# replaces: MyTransformer
# why: positions moved with .to(x.device), blocks made with append and run by index
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList()
        for i in range(layers):
            self.blocks.append(Block(dim, heads))
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        positions = torch.arange(x.shape[-1]).to(x.device)
        h = self.embed(x) + self.position(positions)
        for i in range(len(self.blocks)):
            h = self.blocks[i](h)
        h = self.norm(h)
        return self.out(h)
