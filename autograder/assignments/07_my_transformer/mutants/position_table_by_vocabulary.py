# question: q1
# expect: fail
# replaces: MyTransformer
# why: makes the position table with vocab_size rows: it counts wrong, and raises IndexError for sentences longer than the vocabulary (reported once, with its line; the chaining of the blocks is still checked, on sentences the table can hold)
# hint: raised IndexError at `h = self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device))`
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(vocab_size, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        h = self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device))
        for block in self.blocks:
            h = block(h)
        return self.out(self.norm(h))
