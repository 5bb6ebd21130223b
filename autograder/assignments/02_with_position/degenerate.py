# Degenerate answers to 02_with_position and the most points each may keep (see autograder/degenerate.py).
QUESTIONS = {
    "q1": Question(
        replaces="WithPosition",
        cap=3,
        keeps="test_page_shapes (embed, position, out and the logits' shape), test_sizes (the tables "
              "and the parameter count by formula) and test_random_shapes (the logits' shape for "
              "random sizes)",
        template='''
            class WithPosition(nn.Module):
                def __init__(self, vocab_size, dim=32, max_length=64):
                    super().__init__()
                    self.embed = nn.Embedding(vocab_size, dim)
                    self.position = nn.Embedding(max_length, dim)
                    self.out = nn.Linear(dim, vocab_size)
                    self.vocab_size = vocab_size

                def forward(self, x):
                    return FAKE(x, (*x.shape, self.vocab_size))
        ''',
        variants={
            # the right computation, with new random tables at every call
            "unused_parameters": '''
                class WithPosition(nn.Module):
                    def __init__(self, vocab_size, dim=32, max_length=64):
                        super().__init__()
                        self.embed = nn.Embedding(vocab_size, dim)
                        self.position = nn.Embedding(max_length, dim)
                        self.out = nn.Linear(dim, vocab_size)

                    def forward(self, x):
                        V, dim = self.embed.weight.shape
                        h = torch.randn(V, dim, device=x.device)[x] \\
                            + torch.randn(x.shape[-1], dim, device=x.device)
                        return h @ torch.randn(V, dim, device=x.device).T
            ''',
            # the given NoTalking with a position table that is never used
            "no_talking": '''
                class WithPosition(NoTalking):
                    def __init__(self, vocab_size, dim=32, max_length=64):
                        super().__init__(vocab_size, dim)
                        self.position = nn.Embedding(max_length, dim)
            ''',
            # the position vectors only: the tokens are never looked at
            "ignores_tokens": '''
                class WithPosition(nn.Module):
                    def __init__(self, vocab_size, dim=32, max_length=64):
                        super().__init__()
                        self.embed = nn.Embedding(vocab_size, dim)
                        self.position = nn.Embedding(max_length, dim)
                        self.out = nn.Linear(dim, vocab_size)

                    def forward(self, x):
                        positions = torch.arange(x.shape[-1], device=x.device)
                        return self.out(self.position(positions)).expand(*x.shape, -1)
            ''',
            # the tokens echoed as one-hot logits
            "one_hot_tokens": '''
                class WithPosition(nn.Module):
                    def __init__(self, vocab_size, dim=32, max_length=64):
                        super().__init__()
                        self.embed = nn.Embedding(vocab_size, dim)
                        self.position = nn.Embedding(max_length, dim)
                        self.out = nn.Linear(dim, vocab_size)
                        self.vocab_size = vocab_size

                    def forward(self, x):
                        return F.one_hot(x, self.vocab_size).float()
            ''',
        },
    ),
    "q5": Question(
        replaces="PredictedNonsense",
        cap=0,
        keeps="nothing (the public check, worth 0 points, asks for a fraction)",
        variants={
            "constant": '''
                def PredictedNonsense(p):
                    return 0.32
            ''',
            "echo": '''
                def PredictedNonsense(p):
                    return p
            ''',
            "zero": '''
                def PredictedNonsense(p):
                    return 0.0
            ''',
        },
    ),
}
