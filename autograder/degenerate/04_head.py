# Degenerate answers to 04_head and the most points each may keep (see autograder/degenerate.py).
QUESTIONS = {
    "q1": Question(
        replaces="Head",
        cap=2,
        keeps="test_page_shapes (the shapes of the output and of head.weights) and "
              "test_parameter_count (Q, K, V are nn.Linear(dim, head_dim, bias=False))",
        template='''
            class Head(nn.Module):
                def __init__(self, dim, head_dim):
                    super().__init__()
                    self.Q = nn.Linear(dim, head_dim, bias=False)
                    self.K = nn.Linear(dim, head_dim, bias=False)
                    self.V = nn.Linear(dim, head_dim, bias=False)
                    self.head_dim = head_dim

                def forward(self, x):
                    self.weights = FAKE_WEIGHTS(x, (*x.shape[:-1], x.shape[-2])).detach()
                    return FAKE(x, (*x.shape[:-1], self.head_dim))
        ''',
        variants={
            # the right computation, but with new random matrices at every call
            "unused_parameters": '''
                class Head(nn.Module):
                    def __init__(self, dim, head_dim):
                        super().__init__()
                        self.Q = nn.Linear(dim, head_dim, bias=False)
                        self.K = nn.Linear(dim, head_dim, bias=False)
                        self.V = nn.Linear(dim, head_dim, bias=False)

                    def forward(self, x):
                        dim, head_dim = self.Q.in_features, self.Q.out_features
                        q, k, v = (x @ torch.randn(dim, head_dim) for _ in range(3))
                        out, weights = Attention(q, k, v)
                        self.weights = weights.detach()
                        return out
            ''',
            # attention of the input with itself: no Q, K or V at all
            "no_projections": '''
                class Head(nn.Module):
                    def __init__(self, dim, head_dim):
                        super().__init__()
                        self.Q = nn.Linear(dim, head_dim, bias=False)
                        self.K = nn.Linear(dim, head_dim, bias=False)
                        self.V = nn.Linear(dim, head_dim, bias=False)
                        self.head_dim = head_dim

                    def forward(self, x):
                        out, weights = Attention(x, x, x)
                        self.weights = weights.detach()
                        return out[..., :self.head_dim] if out.shape[-1] >= self.head_dim else \\
                            out.repeat_interleave(-(-self.head_dim // out.shape[-1]), -1)[..., :self.head_dim]
            ''',
        },
    ),
    "q2": "a count worked out by hand: the right number is the answer",
}
