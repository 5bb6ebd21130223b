from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 6


@test_case(points=1, hidden=False, failure_message='GPT(Config(vocab_size=1024)) called on ids of shape (2, 16) should give logits of shape (2, 16, 1024). (This check uses one head.)')  # noqa: E501
def test_gpt_shape(Config, GPT, Block, SelfAttention, MLP):
    import torch

    from course.handles import student
    Config, GPT = student(Config), student(GPT)

    class Same(torch.nn.Module):                    # stands in for a piece of yours that does not run
        def forward(self, x):
            return x

    torch.manual_seed(0)
    cfg = Config(vocab_size=1024, heads=1, dropout=0.0)
    stand_ins = {}                  # your SelfAttention, MLP and Block have checks of their own: here, one
    with torch.random.fork_rng(devices=[]):         # that does not run yet is stood in for
        x = torch.randn(2, 16, 128)
        for name, piece in (("SelfAttention", SelfAttention), ("MLP", MLP), ("Block", Block)):
            try:
                with GPT.swapped(**stand_ins):
                    runs = tuple(student(piece)(cfg)(x).shape) == tuple(x.shape)
            except Exception:
                runs = False
            if not runs:
                stand_ins[name] = lambda *args: Same()
    with GPT.swapped(**stand_ins):
        net = GPT(cfg).eval()
    logits = net(torch.randint(0, 1024, (2, 16)))
    assert tuple(logits.shape) == (2, 16, 1024), \
        f"the logits have shape {tuple(logits.shape)}, expected (2, 16, 1024)"


@test_case(points=0.5, hidden=True, failure_message='GPT(cfg) should have self.tokens = nn.Embedding(vocab_size, dim), self.positions = nn.Embedding(context, dim), self.blocks (an nn.ModuleList of cfg.layers of your Blocks), self.norm = nn.LayerNorm(dim) and self.head = nn.Linear(dim, vocab_size, bias=False), and keep cfg as self.cfg.')  # noqa: E501
def test_gpt_pieces(Config, GPT, SelfAttention, MLP):

    import torch

    from autograder.checks import chapter
    from course.handles import student

    Config, GPT = student(Config), student(GPT)
    pieces = {"SelfAttention": student(SelfAttention), "MLP": student(MLP)}
    for V, C, D, L in [(40, 24, 16, 3), (7, 5, 8, 1)]:
        with chapter.working_pieces(GPT, Config, pieces, D, 2, C):    # yours, or the chapter's
            net = GPT(Config(vocab_size=V, context=C, dim=D, heads=2, layers=L, dropout=0.1))
        shapes = {name: tuple(t.shape) for name, t in net.state_dict().items()
                  if not name.startswith("blocks.")}
        assert net.tokens.isa(torch.nn.Embedding) and shapes.get("tokens.weight") == (V, D), \
            f"self.tokens should be nn.Embedding({V}, {D})"
        assert net.positions.isa(torch.nn.Embedding) and shapes.get("positions.weight") == (C, D), \
            f"self.positions should be nn.Embedding(context={C}, {D})"
        assert net.blocks.isa(torch.nn.ModuleList) and len(net.blocks) == L, \
            f"self.blocks should be an nn.ModuleList of {L} blocks"
        assert all(b.type().endswith("Block") for b in net.blocks), "the blocks should be your Block(cfg)"
        assert net.norm.isa(torch.nn.LayerNorm) and shapes.get("norm.weight") == (D,), \
            f"self.norm should be nn.LayerNorm({D})"
        assert net.head.isa(torch.nn.Linear), "self.head should be an nn.Linear(dim, vocab_size, bias=False)"
        assert "head.bias" not in shapes and net.head.bias.get() is None, "self.head should have no bias"
        assert net.cfg.dim.get() == D, "keep the config as self.cfg"


@test_case(points=1, hidden=True, failure_message='Weight tying: self.head.weight should be the very same tensor as self.tokens.weight (self.head.weight = self.tokens.weight), so the network has vocab_size*dim + context*dim + 2*dim numbers besides its blocks (and a head bias, if any), the table counted once.')  # noqa: E501
def test_gpt_tied_head(Config, GPT, SelfAttention, MLP):
    import math

    from autograder.checks import chapter
    from course.handles import student

    Config, GPT = student(Config), student(GPT)
    pieces = {"SelfAttention": student(SelfAttention), "MLP": student(MLP)}
    for V, C, D, L in [(40, 24, 16, 3), (300, 8, 8, 1)]:
        with chapter.working_pieces(GPT, Config, pieces, D, 2, C):    # yours, or the chapter's
            net = GPT(Config(vocab_size=V, context=C, dim=D, heads=2, layers=L, dropout=0.1))
        assert net.head.weight.identity() == net.tokens.weight.identity(), \
            "head.weight is not the same tensor as tokens.weight: set self.head.weight = self.tokens.weight"
        shapes = net.params(values=False)
        # (a bias is the pieces check's business)
        total = sum(math.prod(t.shape) for name, t in shapes.items() if name != "head.bias")
        blocks = sum(math.prod(t.shape) for b in net.blocks for t in b.params(values=False).values())
        want = V * D + C * D + 2 * D + blocks
        assert total == want, \
            f"{total} trainable numbers; the tables, the final norm and your own blocks make {want}"


@test_case(points=1.5, hidden=True, failure_message='The logits should be head(norm(x)) where x = tokens(ids) + positions(0, 1, ..., T-1) has gone through every block in order (compared with the weights the check set and your own blocks called one at a time, for zero, one and two blocks and inputs shorter than context).')  # noqa: E501
def test_gpt_logits(Config, GPT, Block, SelfAttention, MLP):
    import torch
    import torch.nn.functional as F

    from autograder.checks import chapter
    from course.handles import close, student
    Config, GPT = student(Config), student(GPT)
    pieces = {"SelfAttention": student(SelfAttention), "MLP": student(MLP), "Block": student(Block)}
    torch.manual_seed(4)
    for V, C, D, L, B, T in [(37, 20, 16, 2, 3, 11), (11, 8, 8, 0, 2, 8), (60, 30, 24, 1, 1, 1)]:
        with chapter.working_pieces(GPT, Config, pieces, D, 1, C):    # yours, or the chapter's
            net = GPT(Config(vocab_size=V, context=C, dim=D, heads=1, layers=L, dropout=0.0)).eval()
        top = chapter.enliven(net)
        table = top["tokens.weight"] if "tokens.weight" in top else top["head.weight"]
        ids = torch.randint(0, V, (B, T))
        h = table[ids] + top["positions.weight"][:T]
        for i in range(L):                           # your own blocks, called one at a time
            h = net.blocks[i](h)
        want = F.layer_norm(h, (D,), top["norm.weight"], top["norm.bias"]) @ table.T
        if "head.bias" in top:                       # no bias is the pieces check's business
            want = want + top["head.bias"]
        got = net(ids)
        assert close(got, want, atol=1e-4, rtol=1e-4), \
            f"{L} blocks, ids of shape {(B, T)}: the logits are not head(norm(blocks(tokens(ids) + " \
            "positions(0..T-1))))"


@test_case(points=0.5, hidden=True, failure_message='Make the positions on the device of the input: torch.arange(T, device=ids.device). Otherwise a model on a GPU gets positions from the CPU. (This check first makes sure on the CPU that your GPT does the work: the same logits for the same tokens, logits that change with the tokens and with the two tables.)')  # noqa: E501
def test_gpt_device(Config, GPT):
    import torch

    from autograder.checks import chapter, properties
    from course.handles import StudentError, student
    Config, GPT = student(Config), student(GPT)
    torch.manual_seed(6)
    cfg = Config(vocab_size=9, context=12, dim=8, heads=1, layers=0, dropout=0.0)
    probe = GPT(cfg).eval()
    chapter.gpt_works(probe, chapter.enliven(probe), torch.randint(0, 9, (2, 5)), 9)
    net = GPT(cfg)
    net.to("meta")
    try:
        logits = properties.on_another_device(net, torch.zeros(2, 5, dtype=torch.long, device="meta"))
    except StudentError as error:
        raise AssertionError(f"with the model on another device your forward failed: {error}") from None
    assert type(logits) is dict and logits.get("shape") == [2, 5, 9], \
        f"logits of shape {logits.get('shape') if type(logits) is dict else '?'}"


@test_case(points=0.5, hidden=True, failure_message='The rules: SelfAttention, MLP, Block and GPT are built from nn.Linear, nn.Embedding, nn.LayerNorm, GELU, @, softmax and friends. No F.scaled_dot_product_attention (it belongs in your check 1 only), nn.MultiheadAttention or nn.Transformer... inside them. (The rules point is for a GPT that does the work: the same logits for the same tokens, logits that change with the tokens and with the two tables. This check uses one head.)')  # noqa: E501
def test_gpt_rules(Config, GPT, Block, SelfAttention, MLP):
    import torch

    from autograder.checks import chapter
    from course.handles import broken_rules, student
    Config, GPT = student(Config), student(GPT)
    Block, SelfAttention, MLP = student(Block), student(SelfAttention), student(MLP)
    pieces = {"SelfAttention": SelfAttention, "MLP": MLP, "Block": Block}
    torch.manual_seed(5)
    with chapter.working_pieces(GPT, Config, pieces, 16, 1, 16):  # yours, or the chapter's
        net = GPT(Config(vocab_size=20, context=16, dim=16, heads=1, layers=1, dropout=0.0)).eval()
    chapter.gpt_works(net, chapter.enliven(net), torch.randint(0, 20, (2, 6)), 20)
    broken = broken_rules(GPT, Block, SelfAttention, MLP, net)
    assert not broken, "; ".join(broken)


@test_case(points=1, hidden=True, failure_message="init_weights should give the weights of every nn.Linear and nn.Embedding (the two tables and every layer in the blocks) a normal distribution with standard deviation 0.02, and set every nn.Linear's bias to zero; call self.apply(self.init_weights) at the end of __init__ (after the tying). Then a new GPT starts neutral: a loss of about ln V for any vocabulary size V. (This check also makes sure that your GPT does the work: the same logits for the same tokens, logits that change with the tokens and with the two tables.)")  # noqa: E501
def test_init_weights(Config, GPT, Block, SelfAttention, MLP):
    import math

    import torch
    import torch.nn.functional as F

    from autograder.checks import chapter
    from course.handles import student
    Config, GPT = student(Config), student(GPT)
    pieces = {"SelfAttention": student(SelfAttention), "MLP": student(MLP), "Block": student(Block)}
    torch.manual_seed(1)
    with chapter.working_pieces(GPT, Config, pieces, 32, 4, 40):  # yours, or the chapter's
        net = GPT(Config(vocab_size=300, context=40, dim=32, heads=4, layers=2, dropout=0.1))
    kinds = {path: mro for path, mro in net.modules().items()}
    P = net.params()
    seen = {"Linear": 0, "Embedding": 0}
    for path, mro in kinds.items():
        for kind in seen:
            if f"torch.nn.modules.{'linear' if kind == 'Linear' else 'sparse'}.{kind}" not in mro:
                continue
            seen[kind] += 1
            weight = P.get(f"{path}.weight")
            if weight is not None:
                std, mean = weight.std().item(), weight.mean().item()
                assert 0.017 < std < 0.023 and abs(mean) < 0.004, \
                    f"{path}.weight has mean {mean:.3f} and standard deviation {std:.3f}, expected 0 and 0.02"
            bias = P.get(f"{path}.bias")
            if bias is not None:
                assert bias.abs().max().item() == 0, f"{path}.bias is not zero"
    assert seen["Linear"] >= 1 and seen["Embedding"] == 2, f"found {seen} Linear and Embedding pieces"
    with chapter.working_pieces(GPT, Config, pieces, 16, 1, 12):
        probe = GPT(Config(vocab_size=50, context=12, dim=16, heads=1, layers=1, dropout=0.0)).eval()
    chapter.gpt_works(probe, chapter.enliven(probe), torch.randint(0, 50, (2, 7)), 50)
    for V in (500, 5000):
        with chapter.working_pieces(GPT, Config, pieces, 64, 1, 32):
            new = GPT(Config(vocab_size=V, context=32, dim=64, heads=1, layers=2, dropout=0.0)).eval()
        ids, targets = torch.randint(0, V, (2, 4, 24))
        logits = new(ids)
        assert type(logits) is torch.Tensor and tuple(logits.shape) == (4, 24, V), \
            f"the logits should have shape {(4, 24, V)}"
        assert chapter.differs(new((ids + torch.randint(1, V, ids.shape)) % V), logits), \
            "a new GPT's logits do not change when the tokens change"
        loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1)).item()
        assert abs(loss - math.log(V)) < 0.1, \
            f"vocabulary {V}: a new GPT's loss is {loss:.2f}, expected about ln({V}) = {math.log(V):.2f}"
