# Degenerate answers to 04_head and the most points each may keep (see autograder/degenerate.py).
#
# q1's tests: test_page_shapes (1, public) and test_parameter_count (1) look only at sizes; every
# other test (values 2, batched 1, weights detached 1, gradients 1, permutation 1, rules 1) first
# checks that the head computes from x (same x, same answer; another x, another output and other
# weights; another Q, other weights; another K, other weights again; another V, another output;
# and a non-zero gradient reaching each of Q, K and V), so an answer that does no
# work keeps at most the 2 size points.
_LAYERS = '''
                    self.Q = nn.Linear(dim, head_dim, bias=False)
                    self.K = nn.Linear(dim, head_dim, bias=False)
                    self.V = nn.Linear(dim, head_dim, bias=False)
                    self.head_dim = head_dim
'''

QUESTIONS = {
    "q1": Question(
        replaces="Head",
        cap=2,
        keeps="test_page_shapes (the shapes of the output and of head.weights) and "
              "test_parameter_count (Q, K, V are nn.Linear(dim, head_dim, bias=False))",
        template='''
            class Head(nn.Module):
                def __init__(self, dim, head_dim):
                    super().__init__()''' + _LAYERS + '''
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
            # the right computation with fixed matrices of its own (seeded), not the parameters
            "fixed_own_matrices": '''
                class Head(nn.Module):
                    def __init__(self, dim, head_dim):
                        super().__init__()
                        self.Q = nn.Linear(dim, head_dim, bias=False)
                        self.K = nn.Linear(dim, head_dim, bias=False)
                        self.V = nn.Linear(dim, head_dim, bias=False)
                        g = torch.Generator().manual_seed(0)
                        self.mats = [torch.randn(dim, head_dim, generator=g) for _ in range(3)]

                    def forward(self, x):
                        q, k, v = (x @ m.to(x.dtype) for m in self.mats)
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
            # the values themselves, with uniform weights: no attention at all
            "values_uniform_weights": '''
                class Head(nn.Module):
                    def __init__(self, dim, head_dim):
                        super().__init__()
                        self.Q = nn.Linear(dim, head_dim, bias=False)
                        self.K = nn.Linear(dim, head_dim, bias=False)
                        self.V = nn.Linear(dim, head_dim, bias=False)

                    def forward(self, x):
                        L = x.shape[-2]
                        self.weights = torch.full((*x.shape[:-1], L), 1.0 / L)
                        return self.V(x)
            ''',
            # the values attending to themselves: Q and K never used
            "values_attend_to_themselves": '''
                class Head(nn.Module):
                    def __init__(self, dim, head_dim):
                        super().__init__()
                        self.Q = nn.Linear(dim, head_dim, bias=False)
                        self.K = nn.Linear(dim, head_dim, bias=False)
                        self.V = nn.Linear(dim, head_dim, bias=False)

                    def forward(self, x):
                        v = self.V(x)
                        out, weights = Attention(v, v, v)
                        self.weights = weights.detach()
                        return out
            ''',
            # the queries attend to the queries: K exists and is touched as
            # 0 * K(x).sum() so that a (zero) gradient reaches K.weight
            "ignores_K": '''
                class Head(nn.Module):
                    def __init__(self, dim, head_dim):
                        super().__init__()
                        self.Q = nn.Linear(dim, head_dim, bias=False)
                        self.K = nn.Linear(dim, head_dim, bias=False)
                        self.V = nn.Linear(dim, head_dim, bias=False)

                    def forward(self, x):
                        q = self.Q(x)
                        out, weights = Attention(q, q, self.V(x))
                        self.weights = weights.detach()
                        return out + 0 * self.K(x).sum()
            ''',
            # the mean of the values over the sites (what uniform weights give), weights uniform
            "mean_of_values": '''
                class Head(nn.Module):
                    def __init__(self, dim, head_dim):
                        super().__init__()
                        self.Q = nn.Linear(dim, head_dim, bias=False)
                        self.K = nn.Linear(dim, head_dim, bias=False)
                        self.V = nn.Linear(dim, head_dim, bias=False)

                    def forward(self, x):
                        v = self.V(x)
                        L = x.shape[-2]
                        self.weights = torch.full((*x.shape[:-1], L), 1.0 / L)
                        return v.mean(-2, keepdim=True).expand_as(v).clone()
            ''',
        },
    ),
    "q2": "a count worked out by hand: the right number is the answer",
}
