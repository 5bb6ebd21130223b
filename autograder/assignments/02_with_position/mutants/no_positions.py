# question: q1
# expect: fail
# replaces: WithPosition
# why: makes the position table but never adds it: still NoTalking
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        return self.out(self.embed(x))
