# question: q1
# replaces: WithPosition
# why: the three layers used through their weights (F.embedding, a slice of the position table, F.linear)
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        L = x.size(-1)
        what = F.embedding(x, self.embed.weight)
        where = self.position.weight[:L]                # rows 0 .. L-1, one per position
        return F.linear(what + where, self.out.weight, self.out.bias)
