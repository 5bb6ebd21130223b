from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3


@test_case(
    points=1, hidden=False,
    failure_message=(
        'MLP(cfg) should have self.up = nn.Linear(dim, 4 * dim) and self.down = nn.Linear(4 * dim, dim), and '
        'give back the shape of its input.'))
def test_mlp_shape(Config, MLP):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

    Config, MLP = student(Config), student(MLP)
    torch.manual_seed(0)
    mlp = MLP(Config(vocab_size=1024, dropout=0.0))
    assert mlp.up.isa(torch.nn.Linear) and mlp.down.isa(torch.nn.Linear), "MLP needs self.up and self.down (nn.Linear)"
    out = mlp(torch.randn(2, 16, 128))
    assert tuple(out.shape) == (2, 16, 128), f"mlp(x) has shape {tuple(out.shape)}, expected (2, 16, 128)"


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'MLP(cfg) should have exactly 8*D^2 + 5*D trainable numbers: up = nn.Linear(dim, 4*dim) and down = '
        'nn.Linear(4*dim, dim), both with biases, and nothing else.'))
def test_mlp_parameter_count(Config, MLP):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

    Config, MLP = student(Config), student(MLP)
    for D in (8, 13, 32):
        mlp = MLP(Config(vocab_size=5, context=4, dim=D, heads=1, layers=1, dropout=0.1))
        shapes = {name: tuple(t.shape) for name, t in mlp.params(values=False).items()}
        assert shapes.get("up.weight") == (4 * D, D) and shapes.get("up.bias") == (4 * D,), f"dim={D}: self.up should be nn.Linear({D}, {4 * D})"
        assert shapes.get("down.weight") == (D, 4 * D) and shapes.get("down.bias") == (D,), f"dim={D}: self.down should be nn.Linear({4 * D}, {D})"
        total = sum(math.prod(s) for s in shapes.values())
        assert total == 8 * D * D + 5 * D, f"dim={D}: {total} trainable numbers, expected {8 * D * D + 5 * D}"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'The MLP should compute down(gelu(up(x))) with self.up and self.down (the weights the check set), the'
        ' GELU being F.gelu (the exact one, as nn.GELU()), on every site alone.'))
def test_mlp_values(Config, MLP):
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

    Config, MLP = student(Config), student(MLP)
    torch.manual_seed(1)
    for D, shape in [(8, (3, 5)), (12, (2, 4, 6)), (20, (7,))]:
        mlp = MLP(Config(vocab_size=5, context=9, dim=D, heads=1, layers=1, dropout=0.0)).eval()
        P = nontrivial(mlp.params(values=False))
        mlp.set_params(P)
        x = torch.randn(*shape, D)
        want = F.gelu(x @ P["up.weight"].T + P["up.bias"]) @ P["down.weight"].T + P["down.bias"]
        assert close(mlp(x), want, atol=1e-5, rtol=1e-4), f"dim={D}: the output is not down(gelu(up(x)))"


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'Dropout in the MLP: on the output of self.down, on in train() mode and off in eval() mode '
        '(nn.Dropout(cfg.dropout)). (This check first makes sure that in eval() mode your output changes with'
        ' the input and with self.up and self.down.)'))
def test_mlp_dropout(Config, MLP):
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

    Config, MLP = student(Config), student(MLP)
    torch.manual_seed(2)
    mlp = MLP(Config(vocab_size=5, context=9, dim=16, heads=1, layers=1, dropout=0.5))
    values = nontrivial(mlp.params(values=False))
    mlp.set_params(values)
    x = torch.randn(4, 8, 16)
    mlp.eval()
    calm = works(mlp, values, x, ("up.weight", "down.weight"), "your MLP")
    assert close(mlp(x), calm), "in eval() mode two calls on the same x differ: dropout should be off"
    mlp.train()
    first, second = mlp(x), mlp(x)
    assert type(first) is torch.Tensor and tuple(first.shape) == tuple(x.shape), "in train() mode the output should have the shape of x"
    assert not close(first, second), "in train() mode two calls give the same output: is there a dropout?"
    dropped = first.abs() < 1e-6
    kept = torch.isclose(first, 2 * calm, atol=1e-5, rtol=1e-4)
    assert bool((dropped | kept).all()), "in train() mode each output number should be 0 or twice the eval() value"
    assert 0.35 < dropped.float().mean().item() < 0.65, f"{dropped.float().mean().item():.0%} dropped with dropout=0.5"
