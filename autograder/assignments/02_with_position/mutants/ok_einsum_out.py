# question: q1
# expect: pass
# replaces: WithPosition
# why: the output layer applied by hand with einsum, the lookups in a helper method
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def vectors(self, x):
        where = torch.arange(x.size(-1), device=x.device)
        return self.embed(x) + self.position(where)

    def forward(self, x):
        h = self.vectors(x)
        return torch.einsum("...d,vd->...v", h, self.out.weight) + self.out.bias
