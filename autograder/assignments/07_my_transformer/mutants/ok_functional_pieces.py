# question: q1
# expect: pass
# replaces: MyTransformer
# why: reads the tables by indexing their weights, runs the blocks with functools.reduce and applies the final norm and out with F.layer_norm and F.linear on the pieces' own parameters
import functools


class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for layer in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        where = torch.arange(x.shape[-1], device=x.device)
        h = self.embed.weight[x] + self.position.weight[where]
        h = functools.reduce(lambda h, block: block(h), self.blocks, h)
        h = F.layer_norm(h, self.norm.normalized_shape, self.norm.weight, self.norm.bias, self.norm.eps)
        return F.linear(h, self.out.weight, self.out.bias)
