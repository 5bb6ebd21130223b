from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3


@test_case(
    points=1, hidden=False,
    failure_message=(
        'Block(cfg) should have self.norm1 and self.norm2 (nn.LayerNorm(dim)), self.attn = SelfAttention(cfg)'
        ' and self.mlp = MLP(cfg), and give back the shape of its input. (This check uses one head.)'))
def test_block_pieces(Config, Block):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

    Config, Block = student(Config), student(Block)
    torch.manual_seed(0)
    block = Block(Config(vocab_size=1024, heads=1, dropout=0.0))
    for name in ("norm1", "norm2"):
        assert getattr(block, name).isa(torch.nn.LayerNorm), f"self.{name} should be nn.LayerNorm(dim)"
    assert block.attn.type().endswith("SelfAttention"), "self.attn should be your SelfAttention(cfg)"
    assert block.mlp.type().endswith("MLP"), "self.mlp should be your MLP(cfg)"
    out = block(torch.randn(2, 16, 128))
    assert tuple(out.shape) == (2, 16, 128), f"block(x) has shape {tuple(out.shape)}, expected (2, 16, 128)"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'Besides self.attn and self.mlp a block trains exactly two separate LayerNorms, norm1 and norm2 (2 x '
        '2D numbers): nothing else.'))
def test_block_trains_only_its_pieces(Config, Block):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

    Config, Block = student(Config), student(Block)
    for D in (8, 20):
        block = Block(Config(vocab_size=5, context=6, dim=D, heads=1, layers=1, dropout=0.0))
        shapes = {name: tuple(t.shape) for name, t in block.params(values=False).items()}
        own = {name: s for name, s in shapes.items() if not name.startswith(("attn.", "mlp."))}
        want = {"norm1.weight": (D,), "norm1.bias": (D,), "norm2.weight": (D,), "norm2.bias": (D,)}
        assert own == want, f"besides attn and mlp the block trains {own}, expected exactly the two LayerNorms {want}"
        assert block.norm1.identity() != block.norm2.identity(), "norm1 and norm2 are the same LayerNorm: make two"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'A block should compute x = x + attn(norm1(x)) and then x + mlp(norm2(x)) with its own pieces: '
        'normalise first (pre-norm), add the result to what was there (residual), attention before the MLP. '
        "(Compared with your own attn and mlp called one at a time, after making sure that the block's output"
        ' changes with its input and with norm1 and norm2.)'))
def test_block_values(Config, Block):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

    def nontrivial(shapes):
        """Values with some life in them for every weight and bias (the mask is left alone)."""
        values = {}
        for name, t in shapes.items():
            if not t.is_floating_point() or not name.endswith(("weight", "bias")):
                continue
            if name.endswith("bias"):
                values[name] = 0.3 * torch.randn(t.shape, dtype=t.dtype)
            elif t.dim() == 1:
                values[name] = 1 + 0.3 * torch.randn(t.shape, dtype=t.dtype)
            else:
                values[name] = 1.5 * torch.randn(t.shape, dtype=t.dtype) / math.sqrt(t.shape[-1])
        return values

    def differs(a, b):
        """Two tensors of one shape that do not hold the same numbers."""
        return type(a) is torch.Tensor and type(b) is torch.Tensor and tuple(a.shape) == tuple(b.shape) \
            and not close(a, b, atol=1e-6, rtol=0)

    def works(net, values, x, names, what):
        """Does `net` do the work? Its output is a tensor shaped like x, the same for the same x, that
        changes when x changes and when each parameter in `names` changes (set to other values, then
        back to `values`)."""
        base = net(x)
        assert type(base) is torch.Tensor and tuple(base.shape) == tuple(x.shape), \
            f"{what} should give back a tensor of the shape of its input, {tuple(x.shape)}"
        assert close(net(x), base, atol=1e-6, rtol=0), f"{what} gives two different outputs for the same input (in eval() mode)"
        assert differs(net(x + torch.randn_like(x)), base), \
            f"the output of {what} does not change when its input changes"
        for name in names:
            assert name in values, f"{what} has no parameter called {name}"
            net.set_params({name: values[name] + torch.randn_like(values[name])})
            moved = net(x)
            net.set_params({name: values[name]})
            assert differs(moved, base), \
                f"the output of {what} does not change when {name} changes: does forward use self.{name.rsplit('.', 1)[0]}?"
        return base

    Config, Block = student(Config), student(Block)
    torch.manual_seed(1)
    for D, C, B, T in [(8, 10, 2, 6), (16, 5, 3, 5), (12, 20, 1, 9)]:
        block = Block(Config(vocab_size=5, context=C, dim=D, heads=1, layers=1, dropout=0.0)).eval()
        values = nontrivial(block.params(values=False))
        block.set_params(values)
        x = torch.randn(B, T, D)
        got = works(block, values, x, ("norm1.weight", "norm2.weight"), "your block")
        heard = x + block.attn(F.layer_norm(x, (D,), values["norm1.weight"], values["norm1.bias"]))
        want = heard + block.mlp(F.layer_norm(heard, (D,), values["norm2.weight"], values["norm2.bias"]))
        assert close(got, want, atol=1e-5, rtol=1e-4), f"dim={D}: the output is not x + attn(norm1(x)), then + mlp(norm2(...)), of your own pieces"
