# question: q1
# expect: fail
# replaces: WithPosition
# why: numbers the positions from the end (L-1 down to 0)
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        positions = torch.arange(x.shape[-1] - 1, -1, -1, device=x.device)
        return self.out(self.embed(x) + self.position(positions))
