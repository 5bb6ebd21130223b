from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3


@test_case(points=1, hidden=False, failure_message='Block(cfg) should have self.norm1 and self.norm2 (nn.LayerNorm(dim)), self.attn = SelfAttention(cfg) and self.mlp = MLP(cfg), and give back the shape of its input. (This check uses one head.)')  # noqa: E501
def test_block_pieces(Config, Block, SelfAttention, MLP):
    import torch

    from course.handles import student
    Config, Block = student(Config), student(Block)
    SelfAttention, MLP = student(SelfAttention), student(MLP)

    class Same(torch.nn.Module):                    # stands in for a piece of yours that does not run
        def forward(self, x):
            return x

    torch.manual_seed(0)
    cfg = Config(vocab_size=1024, heads=1, dropout=0.0)
    block = Block(cfg)
    for name in ("norm1", "norm2"):
        assert getattr(block, name).isa(torch.nn.LayerNorm), f"self.{name} should be nn.LayerNorm(dim)"
    assert block.attn.type().endswith("SelfAttention"), "self.attn should be your SelfAttention(cfg)"
    assert block.mlp.type().endswith("MLP"), "self.mlp should be your MLP(cfg)"
    x = torch.randn(2, 16, 128)
    stand_ins = {}                  # your SelfAttention and MLP have checks of their own: here, one that
    with torch.random.fork_rng(devices=[]):         # does not run yet is stood in for
        for name, piece in (("SelfAttention", SelfAttention), ("MLP", MLP)):
            try:
                runs = tuple(piece(cfg)(x).shape) == tuple(x.shape)
            except Exception:
                runs = False
            if not runs:
                stand_ins[name] = lambda *args: Same()
    if stand_ins:
        with Block.swapped(**stand_ins):
            block = Block(cfg)
    out = block(x)
    assert tuple(out.shape) == (2, 16, 128), f"block(x) has shape {tuple(out.shape)}, expected (2, 16, 128)"


@test_case(points=1, hidden=True, failure_message='Besides self.attn and self.mlp a block trains exactly two separate LayerNorms, norm1 and norm2 (2 x 2D numbers): nothing else.')  # noqa: E501
def test_block_trains_only_its_pieces(Config, Block):


    from course.handles import student

    Config, Block = student(Config), student(Block)
    for D in (8, 20):
        block = Block(Config(vocab_size=5, context=6, dim=D, heads=1, layers=1, dropout=0.0))
        shapes = {name: tuple(t.shape) for name, t in block.params(values=False).items()}
        own = {name: s for name, s in shapes.items() if not name.startswith(("attn.", "mlp."))}
        want = {"norm1.weight": (D,), "norm1.bias": (D,), "norm2.weight": (D,), "norm2.bias": (D,)}
        assert own == want, \
            f"besides attn and mlp the block trains {own}, expected exactly the two LayerNorms {want}"
        assert block.norm1.identity() != block.norm2.identity(), \
            "norm1 and norm2 are the same LayerNorm: make two"


@test_case(points=1, hidden=True, failure_message="A block should compute x = x + attn(norm1(x)) and then x + mlp(norm2(x)) with its own pieces: normalise first (pre-norm), add the result to what was there (residual), attention before the MLP. (Compared with your own attn and mlp called one at a time, after making sure that the block's output changes with its input and with norm1 and norm2.)")  # noqa: E501
def test_block_values(Config, Block, SelfAttention, MLP):
    import torch
    import torch.nn.functional as F

    from autograder.checks import chapter
    from course.handles import close, student
    Config, Block = student(Config), student(Block)
    pieces = {"SelfAttention": student(SelfAttention), "MLP": student(MLP)}
    torch.manual_seed(1)
    for D, C, B, T in [(8, 10, 2, 6), (16, 5, 3, 5), (12, 20, 1, 9)]:
        with chapter.working_pieces(Block, Config, pieces, D, 1, C):  # yours, or the chapter's
            block = Block(Config(vocab_size=5, context=C, dim=D, heads=1, layers=1, dropout=0.0)).eval()
        values = chapter.nontrivial(block.params(values=False))
        block.set_params(values)
        x = torch.randn(B, T, D)
        got = chapter.works(block, values, x, ("norm1.weight", "norm2.weight"), "your block")
        # against your own attn and mlp, called one at a time
        heard = x + block.attn(F.layer_norm(x, (D,), values["norm1.weight"], values["norm1.bias"]))
        want = heard + block.mlp(F.layer_norm(heard, (D,), values["norm2.weight"], values["norm2.bias"]))
        assert close(got, want, atol=1e-5, rtol=1e-4), \
            f"dim={D}: the output is not x + attn(norm1(x)), then + mlp(norm2(...)), of your own pieces"
