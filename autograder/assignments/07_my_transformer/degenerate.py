# Degenerate answers to 07_my_transformer and the most points each may keep (see autograder/degenerate.py).

# A MyTransformer with exactly the page's pieces (so the shape and count checks pass) whose forward
# fakes the logits.
_PIECES = '''
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        self.vocab_size = vocab_size
        SmallStart(self)

    def forward(self, x):
        return FAKE(x, (*x.shape, self.vocab_size))
'''

# The same network returning zeros, written out (for the variants, which have no FAKE).
_ZERO_NET = _PIECES.replace("FAKE(x, (*x.shape, self.vocab_size))",
                            "torch.zeros(*x.shape, self.vocab_size, device=x.device)")

QUESTIONS = {
    "q1": Question(
        replaces="MyTransformer",
        cap=4.5,
        keeps="test_mytransformer_shape (public: logits of shape (64, 4, 14)), "
              "test_mytransformer_shapes_random (shapes for random sizes) and "
              "test_mytransformer_parameter_count (the pieces and the count by formula): 1 + 1 + 2.5",
        template=_PIECES,
        variants={
            # all the right pieces, a forward that returns zeros made on x's device: it keeps
            # the shape and count tests only, since the anchored tests compare its numbers
            "zeros_all_pieces": _ZERO_NET,
            # the logits are the input tokens, one-hot: the input echoed, no parameter used
            "one_hot_echo": '''
                class MyTransformer(nn.Module):
                    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
                        super().__init__()
                        self.embed = nn.Embedding(vocab_size, dim)
                        self.position = nn.Embedding(max_length, dim)
                        self.blocks = nn.ModuleList([Block(dim, heads) for i in range(layers)])
                        self.norm = nn.LayerNorm(dim)
                        self.out = nn.Linear(dim, vocab_size)
                        self.vocab_size = vocab_size
                        SmallStart(self)

                    def forward(self, x):
                        return F.one_hot(x, self.vocab_size).float()
            ''',
            # the right computation, but with a new random network at every call (its own
            # parameters are never used)
            "unused_parameters": '''
                class MyTransformer(nn.Module):
                    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
                        super().__init__()
                        self.embed = nn.Embedding(vocab_size, dim)
                        self.position = nn.Embedding(max_length, dim)
                        self.blocks = nn.ModuleList([Block(dim, heads) for i in range(layers)])
                        self.norm = nn.LayerNorm(dim)
                        self.out = nn.Linear(dim, vocab_size)
                        self.sizes = (vocab_size, dim, heads, layers, max_length)
                        SmallStart(self)

                    def forward(self, x):
                        V, dim, heads, layers, max_length = self.sizes
                        h = torch.randn(V, dim)[x] + torch.randn(max_length, dim)[torch.arange(x.shape[-1])]
                        for i in range(layers):
                            h = Block(dim, heads)(h)
                        return nn.Linear(dim, V)(nn.LayerNorm(dim)(h))
            ''',
            # the logits depend on the position only: the tokens are never read
            "positions_only": '''
                class MyTransformer(nn.Module):
                    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
                        super().__init__()
                        self.embed = nn.Embedding(vocab_size, dim)
                        self.position = nn.Embedding(max_length, dim)
                        self.blocks = nn.ModuleList([Block(dim, heads) for i in range(layers)])
                        self.norm = nn.LayerNorm(dim)
                        self.out = nn.Linear(dim, vocab_size)
                        SmallStart(self)

                    def forward(self, x):
                        h = self.position(torch.arange(x.shape[-1], device=x.device))
                        return self.out(self.norm(h)).expand(*x.shape, -1)
            ''',
            # blocks that keep the page's parameters but do nothing, and a constant from out
            "bias_only": '''
                class MyTransformer(nn.Module):
                    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64):
                        super().__init__()
                        self.embed = nn.Embedding(vocab_size, dim)
                        self.position = nn.Embedding(max_length, dim)
                        self.blocks = nn.ModuleList([Block(dim, heads) for i in range(layers)])
                        self.norm = nn.LayerNorm(dim)
                        self.out = nn.Linear(dim, vocab_size)
                        SmallStart(self)

                    def forward(self, x):
                        return self.out.bias.expand(*x.shape, -1) + 0 * self.embed(x).sum(-1, keepdim=True)
            ''',
        },
    ),
    "q2": Question(
        replaces="n_params",
        cap=0,
        keeps="nothing: the right numbers (n_params, largest_piece) are the answer; the count of the "
              "student's own MyTransformer is accepted too, but only for a network with parameters",
        variants={
            # the blank template (no parameters) followed through: 0 parameters, and with every piece
            # of size 0 every name is "the largest", so follow-through needs parameters
            "empty_network_followed_through": '''
                class MyTransformer(nn.Module):
                    def __init__(self, vocab_size, *args, **kwargs):
                        super().__init__()

                big = MyTransformer(2002)
                n_params = Count(big)
                largest_piece = "position"
            ''',
        },
    ),
    "q3": Question(
        replaces="first_unchanged",
        cap=0,
        keeps="nothing: the answer must be what the page's check gives for the notebook's own net, "
              "x and x2, and the batch test needs a network whose logits depend on its input",
        # a MyTransformer that does no work, and the check's answer written down without checking
        template=_PIECES + "\n\nfirst_unchanged = True\n",
        # (each variant also replaces MyTransformer by one that returns zeros, so that the batch
        # test has nothing to earn either: a question's degenerate answer does no work in it at all)
        variants={
            "tensor_true": _ZERO_NET + "\n\nfirst_unchanged = torch.tensor(True)\n",
            # the page's check run honestly, on a network whose logits are the same for every input
            "check_on_constant_net": _ZERO_NET + '''

x2 = torch.stack([SamplePInit() for b in range(64)])
x2[0] = x[0]
x2[1:, 1] = MASK
net = MyTransformer(len(vocab), dim=32, heads=2, layers=2)
first_unchanged = torch.allclose(net(x)[0], net(x2)[0])
''',
            # the check compares the batch with itself
            "same_batch": _ZERO_NET + '''

x2 = x.clone()
first_unchanged = torch.allclose(net(x)[0], net(x2)[0])
''',
        },
    ),
}
