# Degenerate answers to 08_causal and the most points each may keep (see autograder/degenerate.py).
#
# q1 grades five pieces written in five cells (Attention, Head, MultiHead, Block, MyTransformer). A
# degenerate answer replaces the last of them, MyTransformer's cell, with code that defines all five
# again (the later definitions are the ones the checks see), each with the page's parameters and the
# switch handed on, and none of them doing the work.

# Every piece with the page's pieces and the switch handed on; the results faked.
_PIECES = '''
def Attention(q, k, v, causal=False):
    return FAKE(v, tuple(v.shape)), FAKE_WEIGHTS(q, (*q.shape[:-1], k.shape[-2]))


class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = causal
        self.head_dim = head_dim

    def forward(self, x):
        self.weights = FAKE_WEIGHTS(x, (*x.shape[:-1], x.shape[-2])).detach()
        return FAKE(x, (*x.shape[:-1], self.head_dim))


class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads, causal) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return FAKE(x, tuple(x.shape))


class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads, causal)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        return FAKE(x, tuple(x.shape))


class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, causal) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        self.vocab_size = vocab_size
        SmallStart(self)

    def forward(self, x):
        return FAKE(x, (*x.shape, self.vocab_size))
'''

# The same pieces with the switch handed on and an average over the sites that may be heard
# (all of them, or j <= i when causal) in place of the work: causal exactly, talking without
# parameters.
_TALK = '''
def _average(x, causal):
    L = x.shape[-2]
    w = torch.ones(L, L, device=x.device)
    if causal:
        w = w.tril()
    w = w / w.sum(-1, keepdim=True)
    return w @ x, w


def Attention(q, k, v, causal=False):
    out, w = _average(v, causal)
    return out, w.expand(*q.shape[:-1], k.shape[-2])


class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = causal
        self.head_dim = head_dim

    def forward(self, x):
        out, w = _average(x, self.causal)
        self.weights = w.expand(*x.shape[:-1], x.shape[-2])
        return out[..., :self.head_dim]


class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads, causal) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)
        self.causal = causal

    def forward(self, x):
        return _average(x, self.causal)[0]


class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads, causal)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.causal = causal

    def forward(self, x):
        return x + _average(x, self.causal)[0]


class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, causal) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        self.vocab_size = vocab_size
        self.causal = causal
        SmallStart(self)

    def forward(self, x):
        return _average(F.one_hot(x, self.vocab_size).float(), self.causal)[0]
'''

# The do-nothing pieces written out (zeros, uniform weights), for variants that change one of them.
_DEAD = _PIECES.replace("FAKE_WEIGHTS", "_fake_weights").replace("FAKE", "_fake") + '''

def _fake(like, shape):
    return torch.zeros(shape, device=like.device)


def _fake_weights(like, shape):
    return torch.full(shape, 1.0 / shape[-1], device=like.device)
'''

QUESTIONS = {
    "q1": Question(
        replaces="MyTransformer",
        cap=0.5,
        keeps="test_causal_count (a causal MyTransformer(2002) has 1,314,514 parameters, by formula): "
              "every other check needs pieces that compute (weights that depend on q and k, outputs "
              "that depend on the input, the pieces' own parameters used) and a switch that does "
              "something (in Attention, or in Head with a correct Attention)",
        template=_PIECES,
        variants={
            "talk_without_parameters": _TALK,
            # Attention and Head raise; MultiHead, Block and MyTransformer hand the switch on and
            # call their inner pieces (so that they fail with them) but compute nothing themselves
            "inner_pieces_raise": '''
def Attention(q, k, v, causal=False):
    raise ValueError("not done")


class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = causal

    def forward(self, x):
        raise ValueError("not done")


class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads, causal) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        [head(x) for head in self.heads]
        return torch.zeros_like(x)


class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads, causal)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        self.attention(x)
        return torch.zeros_like(x)


class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, causal) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        self.V = vocab_size
        SmallStart(self)

    def forward(self, x):
        h = self.embed(x)
        for b in self.blocks:
            h = b(h)
        return torch.zeros(*x.shape, self.V)
''',
            # the pieces of the earlier notebooks (given at the top of this one) taking the switch
            # and ignoring it: the work of this question not done at all
            "switch_ignored": '''
def Attention(q, k, v, causal=False):
    dots = q @ k.transpose(-2, -1)
    weights = torch.softmax(dots / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)

    def forward(self, x):
        out, weights = Attention(self.Q(x), self.K(x), self.V(x))
        self.weights = weights.detach()
        return out


class MultiHead(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        return self.mix(torch.cat([head(x) for head in self.heads], dim=-1))


class Block(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = MultiHead(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        SmallStart(self)

    def forward(self, x):
        h = self.embed(x) + self.position(torch.arange(x.shape[-1], device=x.device))
        for block in self.blocks:
            h = block(h)
        return self.out(self.norm(h))
''',
            # every piece a do-nothing one; Attention's weights causal (no peeking, rows of one)
            # and uniform over j <= i, whatever q and k are
            "causal_uniform_attention": _DEAD + '''

def Attention(q, k, v, causal=False):
    L = q.shape[-2]
    w = torch.ones(L, L, device=q.device)
    if causal:
        w = w.tril()
    w = (w / w.sum(-1, keepdim=True)).expand(*q.shape[:-1], L)
    return w @ v, w
''',
            # every piece a do-nothing one; Attention passes v through with the identity as weights
            # (causal, rows of one, and no peeking at all)
            "identity_attention": _DEAD + '''

def Attention(q, k, v, causal=False):
    L = q.shape[-2]
    return v + 0, torch.eye(L, device=q.device).expand(*q.shape[:-1], L)
''',
        },
    ),
    "q3": Question(
        replaces="causal_same",
        cap=0,
        keeps="nothing: the page's answers ([0, 1, 2] and []) are right answers and no degenerate "
              "ones (the question can be answered by thinking); what the student's own MyTransformer "
              "gives is accepted only from a network that computes (its logits depend on the tokens, "
              "on self.embed and on self.out)",
        # a MyTransformer that does no work, and the page's comparison run honestly on it
        template='''
class MyTransformer(nn.Module):
    def __init__(self, vocab_size, dim=128, heads=4, layers=4, max_length=64, causal=False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.position = nn.Embedding(max_length, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, causal) for i in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab_size)
        self.vocab_size = vocab_size
        SmallStart(self)

    def forward(self, x):
        return FAKE(x, (*x.shape, self.vocab_size))


same = {}
for causal in (True, False):
    net = MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=causal)
    with torch.no_grad():
        a, b = net(Encode("the cat is alive")[None])[0], net(Encode("the cat is empty")[None])[0]
    same[causal] = [i for i in range(4) if torch.allclose(a[i], b[i])]
causal_same = same[True]
noncausal_same = same[False]
''',
    ),
    "q4": Question(
        replaces="WriteLeftToRight",
        cap=2,
        keeps="test_write_basic (public) and test_write_length_and_prompt: the story is text of L "
              "tokens that starts with the prompt (1 + 1); every other check needs the tokens the "
              "network chooses",
        variants={
            # the prompt, then one word over and over; the network is never called
            "fixed_word": '''
                @torch.no_grad()
                def WriteLeftToRight(net, start, L=32, temperature=1.0):
                    x = StoryTokens(start)
                    the = story_vocab.index("the")
                    return StoryText(torch.cat([x, torch.full((max(L - len(x), 0),), the)]))
            ''',
            # the prompt repeated until the story is long enough
            "prompt_repeated": '''
                @torch.no_grad()
                def WriteLeftToRight(net, start, L=32, temperature=1.0):
                    x = StoryTokens(start)
                    return StoryText(x.repeat(L // len(x) + 1)[:L])
            ''',
            # random words (never the mask or <unk>); the network is never called
            "random_words": '''
                @torch.no_grad()
                def WriteLeftToRight(net, start, L=32, temperature=1.0):
                    x = StoryTokens(start)
                    new = torch.randint(0, STORY_UNK, (max(L - len(x), 0),))
                    return StoryText(torch.cat([x, new]))
            ''',
            # calls the network on the story so far, as it should, then ignores what it says
            "calls_and_ignores": '''
                @torch.no_grad()
                def WriteLeftToRight(net, start, L=32, temperature=1.0):
                    x = StoryTokens(start)
                    device = next(net.parameters()).device
                    while len(x) < L:
                        net(x[None].to(device))
                        x = torch.cat([x, torch.randint(0, STORY_UNK, (1,))])
                    return StoryText(x)
            ''',
            # calls the network on the story so far and forbids the mask and <unk>, then draws
            # every allowed token alike, whatever the logits say
            "ignores_logits": '''
                @torch.no_grad()
                def WriteLeftToRight(net, start, L=32, temperature=1.0):
                    x = StoryTokens(start)
                    device = next(net.parameters()).device
                    while len(x) < L:
                        logits = net(x[None].to(device))[0, -1].cpu()
                        logits[[STORY_MASK, STORY_UNK]] = -math.inf
                        p = torch.softmax(0 * logits.nan_to_num(neginf=0.0) + logits.isinf() * -1e9, dim=-1)
                        x = torch.cat([x, torch.multinomial(p, 1)])
                    return StoryText(x)
            ''',
        },
    ),
}
