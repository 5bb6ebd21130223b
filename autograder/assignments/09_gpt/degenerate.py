# Degenerate answers to 09_gpt and the most points each may keep (see autograder/degenerate.py).
#
# The points of a model question above its cap are each guarded by a test that first makes sure that
# the answer does the work (its output changes with the input and with the parameters the page names)
# or that compares it with numbers computed from weights the check set. The three checks of the
# chapter (q7 to q9) are functions that the tests run on models of their own, right and broken: a check
# that always says the same thing, or a number written by hand, earns nothing there.

_SELF_ATTENTION_INIT = '''
    def __init__(self, cfg):
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.out = nn.Linear(cfg.dim, cfg.dim)
        self.drop = nn.Dropout(cfg.dropout)
        self.register_buffer("mask", torch.tril(torch.ones(cfg.context, cfg.context, dtype=torch.bool)))
'''

_GPT_INIT = '''
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tokens = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.positions = nn.Embedding(cfg.context, cfg.dim)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.layers)])
        self.norm = nn.LayerNorm(cfg.dim)
        self.head = nn.Linear(cfg.dim, cfg.vocab_size, bias=False)
        self.head.weight = self.tokens.weight
        self.apply(self.init_weights)

    @staticmethod
    def init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)
'''


def _cls(head, init, forward):
    """A class: `head` line, the __init__ (and friends) `init`, then `forward`, indented as a class."""
    import textwrap
    body = textwrap.indent(textwrap.dedent(init).strip("\n"), "    ") + "\n\n" + \
        textwrap.indent(textwrap.dedent(forward).strip("\n"), "    ")
    return head + "\n" + body + "\n"


QUESTIONS = {
    "q1": "the defaults and the order of Config's fields are the answer: values written by hand",
    "q2": Question(
        replaces="SelfAttention",
        cap=2.5,
        keeps="test_layers_and_shape (the two layers and the output's shape, 1), test_parameter_count "
              "(4D^2 + 4D by formula, self.heads, 1) and test_mask_is_a_buffer (a (context, context) "
              "buffer in state_dict that moves with .to(), 0.5)",
        template=_cls("class SelfAttention(nn.Module):", _SELF_ATTENTION_INIT, '''
            def forward(self, x):
                return self.drop(FAKE(x, tuple(x.shape)))
        '''),
        variants={
            # the right computation, with new random weights at every call: its own layers unused
            "unused_parameters": _cls("class SelfAttention(nn.Module):", _SELF_ATTENTION_INIT, '''
                def forward(self, x):
                    B, T, D = x.shape
                    d = D // self.heads
                    q, k, v = (x @ torch.randn(D, 3 * D, dtype=x.dtype)).split(D, dim=-1)
                    q, k, v = (t.view(B, T, self.heads, d).transpose(1, 2) for t in (q, k, v))
                    dots = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~self.mask[:T, :T], -math.inf)
                    y = (dots.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, D)
                    return self.drop(y @ torch.randn(D, D, dtype=x.dtype))
            '''),
            # attention of the input with itself: no qkv, no out
            "no_projections": _cls("class SelfAttention(nn.Module):", _SELF_ATTENTION_INIT, '''
                def forward(self, x):
                    B, T, D = x.shape
                    d = D // self.heads
                    h = x.view(B, T, self.heads, d).transpose(1, 2)
                    dots = (h @ h.transpose(-2, -1) / math.sqrt(d)).masked_fill(~self.mask[:T, :T], -math.inf)
                    return self.drop((dots.softmax(dim=-1) @ h).transpose(1, 2).reshape(B, T, D))
            '''),
            # the values of every site, mixed by out, with nobody listening to anybody
            "values_only": _cls("class SelfAttention(nn.Module):", _SELF_ATTENTION_INIT, '''
                def forward(self, x):
                    D = x.shape[-1]
                    return self.drop(self.out(self.qkv(x)[..., 2 * D:]))
            '''),
        },
    ),
    "q3": Question(
        replaces="MLP",
        cap=1.5,
        keeps="test_mlp_shape (up, down and the output's shape, 1) and test_mlp_parameter_count "
              "(8D^2 + 5D by formula, 0.5)",
        template='''
            class MLP(nn.Module):
                def __init__(self, cfg):
                    super().__init__()
                    self.up = nn.Linear(cfg.dim, 4 * cfg.dim)
                    self.down = nn.Linear(4 * cfg.dim, cfg.dim)
                    self.drop = nn.Dropout(cfg.dropout)

                def forward(self, x):
                    return self.drop(FAKE(x, tuple(x.shape)))
        ''',
        variants={
            "unused_parameters": '''
                class MLP(nn.Module):
                    def __init__(self, cfg):
                        super().__init__()
                        self.up = nn.Linear(cfg.dim, 4 * cfg.dim)
                        self.down = nn.Linear(4 * cfg.dim, cfg.dim)
                        self.drop = nn.Dropout(cfg.dropout)

                    def forward(self, x):
                        D = x.shape[-1]
                        return self.drop(F.gelu(x @ torch.randn(D, 4 * D)) @ torch.randn(4 * D, D))
            ''',
        },
    ),
    "q4": Question(
        replaces="Block",
        cap=2,
        keeps="test_block_pieces (norm1, norm2, attn, mlp and the output's shape, 1) and "
              "test_block_trains_only_its_pieces (two LayerNorms besides attn and mlp, 1)",
        template='''
            class Block(nn.Module):
                def __init__(self, cfg):
                    super().__init__()
                    self.norm1 = nn.LayerNorm(cfg.dim)
                    self.attn = SelfAttention(cfg)
                    self.norm2 = nn.LayerNorm(cfg.dim)
                    self.mlp = MLP(cfg)

                def forward(self, x):
                    return FAKE(x, tuple(x.shape))
        ''',
        variants={
            # the block's own lines are right, but its pieces are made to say nothing (so that the
            # values computed from "your own pieces" are x, which the block echoes)
            "quiet_pieces": '''
                class QuietSelfAttention(SelfAttention):
                    def forward(self, x):
                        return torch.zeros_like(x)


                class QuietMLP(MLP):
                    def forward(self, x):
                        return torch.zeros_like(x)


                class Block(nn.Module):
                    def __init__(self, cfg):
                        super().__init__()
                        self.norm1 = nn.LayerNorm(cfg.dim)
                        self.attn = QuietSelfAttention(cfg)
                        self.norm2 = nn.LayerNorm(cfg.dim)
                        self.mlp = QuietMLP(cfg)

                    def forward(self, x):
                        x = x + self.attn(self.norm1(x))
                        return x + self.mlp(self.norm2(x))
            ''',
        },
    ),
    "q5": Question(
        replaces="GPT",
        cap=2.5,
        keeps="test_gpt_shape (the logits' shape, 1), test_gpt_pieces (the pieces and their sizes, 0.5) "
              "and test_gpt_tied_head (head.weight is tokens.weight, parameters by formula, 1)",
        template=_cls("class GPT(nn.Module):", _GPT_INIT, '''
            def forward(self, ids):
                B, T = ids.shape
                return FAKE(ids, (B, T, self.cfg.vocab_size))
        '''),
        variants={
            # the right computation, but from new random tables at every call
            "unused_parameters": _cls("class GPT(nn.Module):", _GPT_INIT, '''
                def forward(self, ids):
                    B, T = ids.shape
                    V, D = self.cfg.vocab_size, self.cfg.dim
                    table = 0.02 * torch.randn(V, D)
                    x = table[ids] + 0.02 * torch.randn(T, D)
                    for block in self.blocks:
                        x = block(x)
                    return self.norm(x) @ table.T
            '''),
        },
    ),
    "q6": "a count worked out by hand: the right numbers are the answer",
    "q7": Question(
        replaces="SameAsPyTorch",
        cap=0,
        keeps="nothing: every test asks for True on right attentions and False on broken ones",
        variants={
            "return_true": '''
                def SameAsPyTorch(attn, x):
                    return True
            ''',
            "return_false": '''
                def SameAsPyTorch(attn, x):
                    return False
            ''',
            "compares_with_itself": '''
                def SameAsPyTorch(attn, x):
                    return torch.allclose(attn(x), attn(x), atol=1e-5)
            ''',
            "coin": '''
                def SameAsPyTorch(attn, x):
                    return bool(torch.rand(()) < 0.5)
            ''',
            "reads_the_label": '''
                def SameAsPyTorch(attn, x):
                    return getattr(attn, "bug", None) is None
            ''',
            # no reference at all; the first attention it sees for an input is called right and every
            # later one compared with it (it must fail whichever one the tests show first)
            "first_answer_memo": '''
                first_seen = {}


                def SameAsPyTorch(attn, x):
                    out = attn(x).detach()
                    key = (id(attn), tuple(x.shape), round(float(x.double().sum()), 6))
                    if key not in first_seen:
                        first_seen[key] = out
                        return True
                    return torch.allclose(out, first_seen[key], atol=1e-5)
            ''',
        },
    ),
    "q8": Question(
        replaces="NoPeeking",
        cap=0,
        keeps="nothing: every test asks for True on networks that see only the past and False on ones that peek",
        variants={
            "no_peeking_true": '''
                def NoPeeking(model, a, b):
                    return True


                a = torch.tensor([[1, 5, 6, 7, 8, 9]])
                b = torch.tensor([[1, 5, 6, 7, 8, 3]])
                no_peeking = True
            ''',
            "return_false": '''
                def NoPeeking(model, a, b):
                    return False
            ''',
            "compares_the_inputs": '''
                def NoPeeking(model, a, b):
                    return torch.equal(a[:, :-1], b[:, :-1])
            ''',
            "compares_with_itself": '''
                def NoPeeking(model, a, b):
                    return torch.allclose(model(a)[:, :-1], model(a)[:, :-1], atol=1e-5)
            ''',
            # the check's networks say how they peek (an attribute on the grader's side): not readable
            "reads_the_label": '''
                def NoPeeking(model, a, b):
                    return getattr(model, "peek", None) is None
            ''',
        },
    ),
    "q9": Question(
        replaces="StartingLoss",
        cap=0,
        keeps="nothing: every test compares the number with the cross entropy of logits the check knows",
        variants={
            "start_loss_6_93": '''
                def StartingLoss(model, ids, targets):
                    return 6.93


                targets = torch.randint(0, cfg.vocab_size, (2, 16))
                start_loss = 6.93
            ''',
            "ln_V": '''
                def StartingLoss(model, ids, targets):
                    return math.log(model(ids).shape[-1])


                targets = torch.randint(0, cfg.vocab_size, (2, 16))
            ''',
            "zero": '''
                def StartingLoss(model, ids, targets):
                    return 0.0


                targets = torch.randint(0, cfg.vocab_size, (2, 16))
            ''',
        },
    ),
}
