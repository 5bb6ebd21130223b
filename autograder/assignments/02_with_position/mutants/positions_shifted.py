# question: q1
# expect: fail
# replaces: WithPosition
# why: numbers the positions from 1 (1, ..., L): row 0 is never used, and a sentence of max_length crashes
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        positions = torch.arange(1, x.shape[-1] + 1, device=x.device)
        return self.out(self.embed(x) + self.position(positions))
