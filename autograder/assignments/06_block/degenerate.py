# Degenerate answers to 06_block and the most points each may keep (see autograder/degenerate.py).
#
# q1: NormalizeByHand is compared with a layer norm the test computes itself (test_normalize_by_hand,
# shapes included), and the public test_norm_matches recomputes what norm_matches reports on a
# tensor of its own, so an answer that does no work keeps nothing.
#
# q2's tests: test_block_shape (1, public), test_block_shapes_random (0.5),
# test_block_parameter_count (1) and test_block_separate_norms (0.5) look only at sizes and
# structure; the others (values 2, mlp 1, gradients 1, permutation 0.5, batch independence 1,
# rules 0.5) first check that the block computes from x with its attention and its mlp (same x, same
# answer; another x, another output; other matrices in the attention, another output; other
# matrices in the mlp, another output), and the values are recomputed from the parameters the test
# puts in, so an answer that does no work keeps at most the 3 size and structure points.
_INIT = '''
                def __init__(self, dim, heads):
                    super().__init__()
                    self.norm1 = nn.LayerNorm(dim)
                    self.attention = MultiHead(dim, heads)
                    self.norm2 = nn.LayerNorm(dim)
                    self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
'''


def _block(forward: str) -> str:
    return "class Block(nn.Module):" + _INIT + "\n" + forward


QUESTIONS = {
    "q1": Question(
        replaces="NormalizeByHand",
        cap=0,
        keeps="nothing: both tests compare the function with a layer norm the test computes",
        template='''
            def NormalizeByHand(x):
                return FAKE(x, tuple(x.shape))
        ''',
        kinds=("zeros", "ones", "constant", "echo", "random", "meta"),
        variants={
            # F.layer_norm's job done by the notebook's own nn.LayerNorm(32): right for the page's x only
            "notebook_norm": '''
                def NormalizeByHand(x):
                    return norm(x).detach()
            ''',
            # centred but not scaled
            "only_centred": '''
                def NormalizeByHand(x):
                    return x - x.mean(dim=-1, keepdim=True)
            ''',
        },
    ),
    "q2": Question(
        replaces="Block",
        cap=3,
        keeps="test_block_shape (public), test_block_shapes_random (output shapes), "
              "test_block_parameter_count (sizes of norms, attention and mlp) and "
              "test_block_separate_norms (two separate nn.LayerNorm)",
        template=_block('''
                def forward(self, x):
                    return FAKE(x, tuple(x.shape))
        '''),
        kinds=("zeros", "ones", "constant", "echo", "random", "meta"),
        variants={
            # the input plus a constant
            "input_plus_constant": _block('''
                def forward(self, x):
                    return x + 0.5
            '''),
            # only the thinking step: no attention
            "mlp_only": _block('''
                def forward(self, x):
                    return x + self.mlp(self.norm2(x))
            '''),
            # only the talking step: no mlp
            "attention_only": _block('''
                def forward(self, x):
                    return x + self.attention(self.norm1(x))
            '''),
            # the right computation with new pieces at every call, not the registered ones
            "unused_parameters": _block('''
                def forward(self, x):
                    dim = x.shape[-1]
                    attention = MultiHead(dim, len(self.attention.heads))
                    mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
                    x = x + attention(F.layer_norm(x, (dim,)))
                    return x + mlp(F.layer_norm(x, (dim,)))
            '''),
        },
    ),
    # q3's public test looks only at the shape (0 points); its hidden test recomputes the output from
    # the answer's own norm1, attention, norm2 and mlp, so an answer that does no work keeps nothing.
    "q3": Question(
        replaces="NoResidual",
        cap=0,
        keeps="nothing: the output is recomputed from the block's own pieces",
        template='''
            class NoResidual(Block):
                def forward(self, x):
                    return FAKE(x, tuple(x.shape))
        ''',
        kinds=("zeros", "echo", "random"),
        variants={
            # the residuals kept: a plain Block
            "still_residual": '''
                class NoResidual(Block):
                    pass
            ''',
            # the talking step only
            "attention_only": '''
                class NoResidual(Block):
                    def forward(self, x):
                        return self.attention(self.norm1(x))
            ''',
        },
    ),
}
