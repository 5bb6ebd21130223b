# question: q1
# expect: pass
# replaces: WithPosition
# why: one position index per token (expand_as), looked up like the tokens
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        positions = torch.arange(x.shape[-1], device=x.device).expand_as(x)
        h = self.embed(x)
        h = h + self.position(positions)
        return self.out(h)
