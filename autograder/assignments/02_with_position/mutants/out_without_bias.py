# question: q1
# expect: fail
# replaces: WithPosition
# why: the output layer has no bias: a word's logits miss out.bias (and the count is short)
class WithPosition(nn.Module):
    def __init__(self, vocab_size, dim=32, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.out = nn.Linear(dim, vocab_size, bias=False)

    def forward(self, x):
        positions = torch.arange(x.shape[-1], device=x.device)
        return self.out(self.embed(x) + self.position(positions))
