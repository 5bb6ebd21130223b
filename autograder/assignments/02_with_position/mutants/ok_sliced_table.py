# question: q1
# expect: pass
# replaces: WithPosition
# why: adds the first L rows of the position table directly
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        L = x.shape[-1]
        return self.out(self.embed(x) + self.position.weight[:L])
