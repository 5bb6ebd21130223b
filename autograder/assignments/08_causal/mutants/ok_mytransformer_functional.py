# question: q1
# expect: pass
# replaces: MyTransformer
# why: hands causal on by keyword, looks the tables up with F.embedding and applies the final norm and out with F.layer_norm and F.linear
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList()
        for layer in range(layers):
            self.blocks.append(Block(dim, heads, causal=causal))
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        where = torch.arange(x.shape[-1], device=x.device)
        h = F.embedding(x, self.embed.weight) + F.embedding(where, self.position.weight)
        for block in self.blocks:
            h = block(h)
        h = F.layer_norm(h, (h.shape[-1],), self.norm.weight, self.norm.bias, self.norm.eps)
        return F.linear(h, self.out.weight, self.out.bias)
