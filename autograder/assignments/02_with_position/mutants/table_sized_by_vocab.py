# question: q1
# expect: fail
# replaces: WithPosition
# why: sizes the position table by the vocabulary instead of max_length
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(vocab_size, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        positions = torch.arange(x.shape[-1], device=x.device)
        return self.out(self.embed(x) + self.position(positions))
