# question: q1
# expect: fail
# replaces: MyTransformer
# why: its blocks keep Block's parameters but pass their input through unchanged (a Block of its own whose forward does nothing)
class IdleBlock(Block):
    def forward(self, x):
        return x


class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([IdleBlock(dim, heads) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        h = self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device))
        for block in self.blocks:
            h = block(h)
        return self.out(self.norm(h))
