# question: q1
# expect: fail
# replaces: WithPosition
# why: multiplies the word vectors by sqrt(dim), as some papers do (the page adds them as they are)
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)
        self.scale = math.sqrt(dim)

    def forward(self, x):
        positions = torch.arange(x.shape[-1], device=x.device)
        return self.out(self.embed(x) * self.scale + self.position(positions))
