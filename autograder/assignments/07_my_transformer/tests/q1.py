from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 10


@test_case(points=1, hidden=False, failure_message='net = MyTransformer(len(vocab), dim=32, heads=2, layers=2) should turn a batch of 64 four-word sentences into logits of shape (64, 4, 14).')  # noqa: E501
def test_mytransformer_shape(MyTransformer):
    import torch

    from course import SamplePInit, vocab
    from course.handles import student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(0)
    net = MyTransformer(len(vocab), dim=32, heads=2, layers=2)
    x = torch.stack([SamplePInit() for b in range(64)])
    out = net(x)
    assert type(out) is torch.Tensor, "MyTransformer should return a tensor of logits"
    assert tuple(out.shape) == (64, 4, 14), \
        "MyTransformer(len(vocab), dim=32, heads=2, layers=2) on a (64, 4) batch should give (64, 4, 14), " \
        f"yours gives {tuple(out.shape)}"


@test_case(points=1, hidden=True, failure_message='MyTransformer should turn tokens of shape (batch, L) into logits of shape (batch, L, vocab_size) for any sizes up to max_length (and (L,) into (L, vocab_size)).')  # noqa: E501
def test_mytransformer_shapes_random(MyTransformer):
    import torch

    from course.handles import student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(1)
    for V, dim, heads, layers, max_length, batch, L in [(11, 12, 3, 3, 9, 2, 9), (7, 8, 2, 1, 20, 3, 13),
                                                        (30, 16, 4, 2, 64, 1, 1)]:
        net = MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length)
        out = net(torch.randint(V, (batch, L)))
        assert type(out) is torch.Tensor and tuple(out.shape) == (batch, L, V), \
            f"MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}, max_length={max_length}) on a " \
            f"batch of shape {(batch, L)} gave {tuple(getattr(out, 'shape', ()))}, expected {(batch, L, V)}"
        out = net(torch.randint(V, (L,)))
        assert type(out) is torch.Tensor and tuple(out.shape) == (L, V), \
            f"on one sentence of shape {(L,)} your MyTransformer gave {tuple(getattr(out, 'shape', ()))}, " \
            f"expected {(L, V)}: use x.shape[-1] for the length"


@test_case(points=2.5, hidden=True, failure_message='Check the pieces and the number of parameters: self.embed (vocab_size x dim), self.position (max_length x dim), self.blocks (an nn.ModuleList of `layers` separate Blocks), self.norm (a new nn.LayerNorm(dim) of its own) and self.out = nn.Linear(dim, vocab_size).')  # noqa: E501
def test_mytransformer_parameter_count(MyTransformer):
    import torch.nn as nn

    from autograder.checks import params
    from course.handles import student
    MyTransformer = student(MyTransformer)

    def count(net):
        return params.count(params.shapes(net))
    net = MyTransformer(13, dim=8, heads=2, layers=3, max_length=7)
    assert net.blocks.isa(nn.ModuleList) or net.blocks.isa(nn.Sequential), \
        "self.blocks should be an nn.ModuleList (a plain Python list hides the blocks from PyTorch)"
    assert len(net.blocks) == 3, \
        f"MyTransformer(..., layers=3) should have 3 blocks, yours has {len(net.blocks)}"
    assert len({b.identity() for b in net.blocks}) == 3, \
        "your blocks are all the same block: make a new Block for each layer"
    shapes = params.shapes(net)
    assert shapes.get("embed.weight") == (13, 8), "self.embed should be nn.Embedding(vocab_size, dim)"
    assert shapes.get("position.weight") == (7, 8), \
        "self.position should have max_length = 7 rows of dim = 8, yours has shape " \
        f"{shapes.get('position.weight')}"
    assert net.norm.isa(nn.LayerNorm) and "norm" in net.modules(), \
        "self.norm should be a new nn.LayerNorm(dim) of its own, not one of the blocks' norms"
    got = count(MyTransformer(2002))
    assert got == 1314514, \
        f"a default MyTransformer(2002) should have 1,314,514 parameters, yours has {got:,}"
    for V, dim, heads, layers, max_length in [(11, 12, 3, 3, 9), (7, 8, 2, 1, 20), (30, 16, 4, 2, 64)]:
        block = 12 * dim * dim + 10 * dim
        want = V * dim + max_length * dim + layers * block + 2 * dim + dim * V + V
        got = count(MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length))
        assert got == want, f"MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}, " \
            f"max_length={max_length}) should have {want} parameters, yours has {got}: token table, " \
            f"position table with max_length rows, {layers} blocks, one final norm, out"


@test_case(points=2, hidden=True, failure_message="After the token and position vectors, your forward should send them through every block of self.blocks once, in order (each block's output is the next block's input), then apply self.norm and then self.out.")  # noqa: E501
def test_mytransformer_values(MyTransformer):
    import torch

    from autograder.checks import params, reference
    from autograder.checks.hints import Hint, gate
    from course.handles import close, student
    MyTransformer = student(MyTransformer)

    def randomize(piece):
        piece.set_params(params.scaled(piece.params(values=False), matrix=1.0, weight=(1, 0.5)))
    torch.manual_seed(2)
    for V, dim, heads, layers, max_length, batch, L in [(11, 12, 3, 3, 9, 2, 6), (7, 8, 2, 2, 16, 3, 16),
                                                         (20, 16, 4, 1, 5, 1, 5)]:
        net = MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length)
        L = params.rows(net.params(values=False), "position.weight", L)   # a wrong table: the count test's
        # non-trivial parameters; the position table is zero here (the positions have a test of their own)
        with gate("your MyTransformer should be made of the page's pieces: self.embed, self.position, "
                  "self.blocks (one Block(dim, heads) per layer), self.norm and self.out"):
            randomize(net)
            blocks = list(net.blocks)         # (blocks PyTorch cannot find are the count test's business)
            for b in blocks:
                randomize(b)
            net.embed.set_params({"weight": torch.randn(V, dim)})
            table = net.position.params(values=False)["weight"]
            net.position.set_params({"weight": torch.zeros(table.shape)})
            embed, norm, out = net.embed.params()["weight"], net.norm.params(), net.out.params()
        x = torch.randint(V, (batch, L))
        got = net(x)
        if type(got) is not torch.Tensor or tuple(got.shape) != (batch, L, V):
            raise Hint(f"MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}) gives logits of "
                       f"shape {tuple(getattr(got, 'shape', ()))} for tokens of shape {(batch, L)}, not "
                       f"{(batch, L, V)}")
        # your own blocks, called one by one: what the network computes when it chains them
        h, calls = embed[x], []
        for b in blocks:
            said = b(h)
            if type(said) is not torch.Tensor or tuple(said.shape) != tuple(h.shape):
                raise Hint("your blocks should give vectors of the shape they are given: make them with the "
                           "given Block(dim, heads)")
            calls.append((b, h, said))
            h = said
        assert close(got, reference.linear(out, "", reference.layer_norm(norm, h)), atol=1e-4, rtol=1e-4), \
            f"MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}) does not compute " \
            "out(norm(block_n(...block_1(h)))): every block once, in order, then the final norm, then out"
        # each block computes the page's Block from its own values, whatever it names its pieces
        for b, h, said in calls:
            values = b.params()
            pieces = reference.block_pieces(b.modules(), values, dim, heads)
            attention = params.module_at(b, pieces.attention_module) if pieces.attention_module else None
            wants = reference.own_block(pieces, values, h, attention)
            if not any(close(said, want, atol=1e-4, rtol=1e-4) for want in wants):
                raise Hint("your blocks do not compute what Block computes: make them with the given "
                           "Block(dim, heads)")


@test_case(points=1, hidden=True, failure_message='Every table and matrix should start small (standard deviation 0.02): call SmallStart(self) as the very last line of __init__, after all the pieces are made.')  # noqa: E501
def test_mytransformer_small_start(MyTransformer):
    import torch

    from autograder.checks import work
    from course.handles import student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(3)
    net = MyTransformer(300, dim=32, heads=2, layers=2, max_length=64)
    params = net.params()
    kinds = ("torch.nn.modules.linear.Linear", "torch.nn.modules.sparse.Embedding")
    pieces = [path for path, classes in net.modules().items() if any(k in classes for k in kinds)]
    assert len(pieces) >= 3, "your MyTransformer has no tables or matrices yet"
    for path in pieces:
        std = float(params[path + ".weight"].std())
        assert 0.015 < std < 0.025, f"the weights of {path} have standard deviation {std:.3f}, not 0.02: " \
            "call SmallStart(self) as the very last line of __init__"
    work.transformer_works(lambda: MyTransformer(13, dim=8, heads=2, layers=2, max_length=9), 13,
                           then=", so how it starts cannot count")


@test_case(points=1, hidden=True, failure_message="Your network should know where each token is: the vector that goes into the first block at position i is the token's vector plus row i of the position table, self.embed(x) + self.position(torch.arange(L, device=x.device)).")  # noqa: E501
def test_mytransformer_position_dependence(MyTransformer):
    import math

    import torch

    from autograder.checks import params, work
    from course.handles import close, student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(4)
    work.transformer_works(lambda: MyTransformer(13, dim=8, heads=2, layers=2, max_length=9), 13)
    for V, dim, heads, layers, max_length, L in [(12, 16, 2, 2, 10, 7), (9, 8, 2, 1, 16, 9),
                                                 (20, 12, 3, 2, 64, 5)]:
        net = MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length)
        new = params.scaled(net.params(values=False), matrix=1.0, weight=(1, 0.5))
        assert "embed.weight" in new and "position.weight" in new, \
            "your MyTransformer needs self.embed and self.position"
        net.set_params(new)
        x = torch.randperm(V)[:L][None]          # L different tokens
        before = net(x)
        assert type(before) is torch.Tensor and tuple(before.shape) == (1, L, V), \
            "your MyTransformer does not give logits of shape (batch, L, vocab_size) yet"
        # another position table must change the logits
        net.set_params({"position.weight": torch.randn(new["position.weight"].shape) / math.sqrt(dim)})
        assert not close(net(x), before, atol=1e-5), "your network's logits do not change when the " \
            "position table changes: add self.position(positions) to the token vectors"
        # the same network with the position vectors moved into the token table: token x_i gets
        # row i of the position table added, and the position table is zero. If the network adds
        # the position vectors to the token vectors, nothing changes.
        table = new["embed.weight"].clone()
        table[x[0]] = table[x[0]] + new["position.weight"][:L]
        net.set_params({"embed.weight": table, "position.weight": torch.zeros(new["position.weight"].shape)})
        after = net(x)
        assert close(after, before, atol=1e-5, rtol=1e-5), "your network does not add the position vectors " \
            "(row i of self.position for position i) to the token vectors"


@test_case(points=1, hidden=True, failure_message='Your forward makes its positions on the CPU even when x lives on a GPU: use torch.arange(x.shape[-1], device=x.device).')  # noqa: E501
def test_mytransformer_device(MyTransformer):
    import torch

    from autograder.checks import properties, work
    from course.handles import student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(6)
    work.transformer_works(lambda: MyTransformer(9, dim=8, heads=2, layers=2), 9,
                           then=", so its device cannot be checked")
    net = MyTransformer(9, dim=8, heads=2, layers=2)
    net.to("meta")                                  # the network on another device ("meta": shapes only)
    for piece in net.blocks:                        # (blocks PyTorch cannot find are the ModuleList test's)
        piece.to("meta")
    out = properties.on_another_device(net, torch.zeros(2, 5, dtype=torch.long, device="meta"), mixing=(
        "with the network and x on another device, your forward makes a tensor on the CPU: use "
        "torch.arange(L, device=x.device)"))
    assert type(out) is dict and out.get("shape") == [2, 5, 9] and out.get("device") == "meta", \
        "your MyTransformer gives the wrong shape on another device"


@test_case(points=0.5, hidden=True, failure_message="Your MyTransformer does not run yet, or breaks the rules: build MyTransformer from your own blocks; PyTorch's ready-made transformer pieces are not allowed.")  # noqa: E501
def test_mytransformer_rules(MyTransformer):
    import torch

    from autograder.checks import work
    from course.handles import broken_rules, student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(5)
    net = MyTransformer(9, dim=8, heads=2, layers=2)
    out = net(torch.randint(9, (2, 5)))
    assert type(out) is torch.Tensor and tuple(out.shape) == (2, 5, 9), \
        "your MyTransformer does not run yet, so the rules cannot be checked"
    work.transformer_works(lambda: MyTransformer(9, dim=8, heads=2, layers=2), 9,
                           then=", so the rules cannot be checked")
    broken = broken_rules(MyTransformer, net)
    assert not broken, "; ".join(broken)
