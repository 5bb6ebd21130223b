# question: q1
# expect: pass
# replaces: WithPosition
# why: one-hot positions times the table, F.embedding on the word table, the forward in steps
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        L = x.shape[-1]
        onehot = F.one_hot(torch.arange(L, device=x.device), self.position.num_embeddings)
        where = onehot.to(self.position.weight.dtype) @ self.position.weight
        what = F.embedding(x, self.embed.weight)
        return F.linear(what + where, self.out.weight, self.out.bias)
