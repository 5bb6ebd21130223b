# question: q1
# replaces: MyTransformer
# why: the blocks in an nn.Sequential called once, the positions given a batch index of 1
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        L = x.size(-1)
        where = self.position(torch.arange(L, device=x.device))
        h = self.blocks(self.embed(x) + where)
        h = self.norm(h)
        return self.out(h)
