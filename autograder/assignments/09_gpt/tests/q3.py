from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3


@test_case(points=1, hidden=False, failure_message='MLP(cfg) should have self.up = nn.Linear(dim, 4 * dim) and self.down = nn.Linear(4 * dim, dim), and give back the shape of its input.')  # noqa: E501
def test_mlp_shape(Config, MLP):

    import torch

    from course.handles import student

    Config, MLP = student(Config), student(MLP)
    torch.manual_seed(0)
    mlp = MLP(Config(vocab_size=1024, dropout=0.0))
    assert mlp.up.isa(torch.nn.Linear) and mlp.down.isa(torch.nn.Linear), \
        "MLP needs self.up and self.down (nn.Linear)"
    out = mlp(torch.randn(2, 16, 128))
    assert tuple(out.shape) == (2, 16, 128), f"mlp(x) has shape {tuple(out.shape)}, expected (2, 16, 128)"


@test_case(points=0.5, hidden=True, failure_message='MLP(cfg) should have exactly 8*D^2 + 5*D trainable numbers: up = nn.Linear(dim, 4*dim) and down = nn.Linear(4*dim, dim), both with biases, and nothing else.')  # noqa: E501
def test_mlp_parameter_count(Config, MLP):
    import math

    from course.handles import student

    Config, MLP = student(Config), student(MLP)
    for D in (8, 13, 32):
        mlp = MLP(Config(vocab_size=5, context=4, dim=D, heads=1, layers=1, dropout=0.1))
        shapes = {name: tuple(t.shape) for name, t in mlp.params(values=False).items()}
        assert shapes.get("up.weight") == (4 * D, D) and shapes.get("up.bias") == (4 * D,), \
            f"dim={D}: self.up should be nn.Linear({D}, {4 * D})"
        assert shapes.get("down.weight") == (D, 4 * D) and shapes.get("down.bias") == (D,), \
            f"dim={D}: self.down should be nn.Linear({4 * D}, {D})"
        total = sum(math.prod(s) for s in shapes.values())
        assert total == 8 * D * D + 5 * D, f"dim={D}: {total} trainable numbers, expected {8 * D * D + 5 * D}"


@test_case(points=1, hidden=True, failure_message='The MLP should compute down(gelu(up(x))) with self.up and self.down (the weights the check set), the GELU being F.gelu (the exact one, as nn.GELU()), on every site alone.')  # noqa: E501
def test_mlp_values(Config, MLP):
    import torch

    from autograder.checks import chapter
    from course.handles import close, student
    Config, MLP = student(Config), student(MLP)
    torch.manual_seed(1)
    for D, shape in [(8, (3, 5)), (12, (2, 4, 6)), (20, (7,))]:
        mlp = MLP(Config(vocab_size=5, context=9, dim=D, heads=1, layers=1, dropout=0.0)).eval()
        P = chapter.nontrivial(mlp.params(values=False))
        mlp.set_params(P)
        x = torch.randn(*shape, D)
        assert close(mlp(x), chapter.mlp(P, x), atol=1e-5, rtol=1e-4), \
            f"dim={D}: the output is not down(gelu(up(x)))"


@test_case(points=0.5, hidden=True, failure_message='Dropout in the MLP: on the output of self.down, on in train() mode and off in eval() mode (nn.Dropout(cfg.dropout)). (This check first makes sure that in eval() mode your output changes with the input and with self.up and self.down.)')  # noqa: E501
def test_mlp_dropout(Config, MLP):
    import torch

    from autograder.checks import chapter
    from course.handles import close, student
    Config, MLP = student(Config), student(MLP)
    torch.manual_seed(2)
    mlp = MLP(Config(vocab_size=5, context=9, dim=16, heads=1, layers=1, dropout=0.5))
    values = chapter.nontrivial(mlp.params(values=False))
    mlp.set_params(values)
    x = torch.randn(4, 8, 16)
    mlp.eval()
    calm = chapter.works(mlp, values, x, ("up.weight", "down.weight"), "your MLP")
    assert close(mlp(x), calm), "in eval() mode two calls on the same x differ: dropout should be off"
    chapter.dropout(mlp, x, calm, "your MLP")
