# question: q1
# expect: pass
# replaces: WithPosition
# why: makes the positions on the CPU, then moves them to x's device
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        positions = torch.arange(x.size(1)).to(x.device)
        return self.out(self.embed(x) + self.position(positions)[None, :, :])
