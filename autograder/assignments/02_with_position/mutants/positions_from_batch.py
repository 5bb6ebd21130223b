# question: q1
# expect: fail
# replaces: WithPosition
# why: the same position for every word of a sentence, one per sentence of the batch (x.shape[0] as a column)
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        positions = torch.arange(x.shape[0], device=x.device) % self.position.num_embeddings
        return self.out(self.embed(x) + self.position(positions)[:, None, :])
