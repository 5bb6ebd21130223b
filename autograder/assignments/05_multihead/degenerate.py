# Degenerate answers to 05_multihead and the most points each may keep (see autograder/degenerate.py).
#
# q2's tests: test_multihead_shape (1, public), test_multihead_shapes_random (1),
# test_multihead_parameter_count (1) and test_multihead_separate_registered_heads (1) look only at
# sizes and structure; the others (values 2, permutation 1, rules 1) first check that the answer
# computes from x with its heads (same x, same answer; another x, another output; another Q, then
# another K, then another V in the heads, another output each time), and the values are recomputed from the matrices the test puts in, so
# an answer that does no work keeps at most the 4 size and structure points.
_INIT = '''
                def __init__(self, dim, heads):
                    super().__init__()
                    self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
                    self.mix = nn.Linear(dim, dim)
'''


def _multihead(forward: str) -> str:
    return "class MultiHead(nn.Module):" + _INIT + "\n" + forward


QUESTIONS = {
    "q1": "two shapes the page's example gives ((64, 5, 8) and (64, 5, 5)): the right value is the "
          "answer, however it was found",
    "q2": Question(
        replaces="MultiHead",
        cap=4,
        keeps="test_multihead_shape (public), test_multihead_shapes_random (output shapes), "
              "test_multihead_parameter_count (sizes of the heads and of mix) and "
              "test_multihead_separate_registered_heads (an nn.ModuleList of separate heads)",
        template=_multihead('''
                def forward(self, x):
                    return FAKE(x, tuple(x.shape))
        '''),
        variants={
            # every head's queries attend to its own queries: K is never used (as 04's ignores_K, per head)
            "heads_ignore_K": _multihead('''
                def forward(self, x):
                    outs = []
                    for head in self.heads:
                        q = head.Q(x)
                        outs.append(Attention(q, q, head.V(x))[0] + 0 * head.K(x).sum())
                    return self.mix(torch.cat(outs, dim=-1))
            '''),
            # mix applied to the input itself: no head is ever called
            "mix_only": _multihead('''
                def forward(self, x):
                    return self.mix(x)
            '''),
            # the right computation with new heads at every call, not the registered ones
            "unused_heads": _multihead('''
                def forward(self, x):
                    dim = x.shape[-1]
                    fresh = [Head(dim, dim // len(self.heads)) for h in self.heads]
                    return self.mix(torch.cat([head(x) for head in fresh], dim=-1))
            '''),
            # heads of its own that have the right sizes but return zeros, glued and mixed: the
            # output is mix's bias, self-consistent with "your own heads called one by one"
            "zero_heads": '''
                class ZeroHead(nn.Module):
                    def __init__(self, dim, head_dim):
                        super().__init__()
                        self.Q = nn.Linear(dim, head_dim, bias=False)
                        self.K = nn.Linear(dim, head_dim, bias=False)
                        self.V = nn.Linear(dim, head_dim, bias=False)
                        self.head_dim = head_dim

                    def forward(self, x):
                        L = x.shape[-2]
                        self.weights = torch.full((*x.shape[:-1], L), 1.0 / L)
                        return torch.zeros(*x.shape[:-1], self.head_dim)


                class MultiHead(nn.Module):
                    def __init__(self, dim, heads):
                        super().__init__()
                        self.heads = nn.ModuleList([ZeroHead(dim, dim // heads) for h in range(heads)])
                        self.mix = nn.Linear(dim, dim)

                    def forward(self, x):
                        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
            ''',
            # heads of its own that echo a slice of x (no Q, K or V used), glued and mixed
            "echo_heads": '''
                class EchoHead(nn.Module):
                    def __init__(self, dim, head_dim):
                        super().__init__()
                        self.Q = nn.Linear(dim, head_dim, bias=False)
                        self.K = nn.Linear(dim, head_dim, bias=False)
                        self.V = nn.Linear(dim, head_dim, bias=False)
                        self.head_dim = head_dim

                    def forward(self, x):
                        L = x.shape[-2]
                        self.weights = torch.full((*x.shape[:-1], L), 1.0 / L)
                        return x[..., :self.head_dim].clone()


                class MultiHead(nn.Module):
                    def __init__(self, dim, heads):
                        super().__init__()
                        self.heads = nn.ModuleList([EchoHead(dim, dim // heads) for h in range(heads)])
                        self.mix = nn.Linear(dim, dim)

                    def forward(self, x):
                        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))
            ''',
        },
    ),
    "q3": "counts: multi_params is worked out by hand and multi_count is PyTorch's count of the "
          "notebook's own multi (checked against that multi); the right numbers are the answer",
    "q4": "a count worked out by hand: the right number is the answer",
}
