from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 9


@test_case(points=1, hidden=False, failure_message='block = Block(32, 4) should turn a (64, 5, 32) batch into a (64, 5, 32) batch.')  # noqa: E501
def test_block_shape(Block):
    import math

    import torch

    from course.handles import student
    Block = student(Block)

    def reference_attention(q, k, v):        # Block is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    torch.manual_seed(0)
    block = Block(32, 4)
    with block.swapped(Attention=reference_attention):
        out = block(torch.randn(64, 5, 32))
    assert tuple(out.shape) == (64, 5, 32), \
        f"Block(32, 4) on a (64, 5, 32) batch should give (64, 5, 32), yours gives {tuple(out.shape)}"


@test_case(points=0.5, hidden=True, failure_message='Block should keep the shape of its input, for any dim, heads, batch size and length, and for one sentence of shape (L, dim).')  # noqa: E501
def test_block_shapes_random(Block):
    import torch

    from autograder.checks import properties
    from course.handles import student
    Block = student(Block)
    torch.manual_seed(1)
    properties.keeps_shape(Block, [(12, 3, 2, 7), (8, 1, 3, 4), (20, 5, 1, 9), (6, 2, 4, 1)], "Block")


@test_case(points=1, hidden=True, failure_message="The sizes of your Block's pieces are wrong: norm1 and norm2 are nn.LayerNorm(dim) (a scale and a shift of dim numbers each), attention is MultiHead(dim, heads), and the mlp is nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), both with biases; nothing else has parameters.")  # noqa: E501
def test_block_parameter_count(Block, MultiHead):
    from autograder.checks import params
    from course.handles import student
    Block, MultiHead = student(Block), student(MultiHead)
    for dim, heads in [(32, 4), (12, 3), (10, 2), (9, 1), (24, 6)]:
        block = Block(dim, heads)
        for norm in ("norm1", "norm2"):
            n = params.count(params.shapes(getattr(block, norm)))
            assert n == 2 * dim, f"{norm} of Block({dim}, {heads}) has {n} trainable numbers, not 2 * {dim}"
        attention = params.shapes(MultiHead(dim, heads))        # as your notebook's MultiHead makes it
        assert params.shapes(block.attention) == attention, \
            f"attention of Block({dim}, {heads}) is not a MultiHead({dim}, {heads})"
        mlp = dim * 4 * dim + 4 * dim + 4 * dim * dim + dim
        n = params.count(params.shapes(block.mlp))
        assert n == mlp, f"the mlp of Block({dim}, {heads}) has {n} trainable numbers, not {mlp} " \
            "(dim -> 4 * dim -> dim, with biases)"
        want = 4 * dim + params.count(attention) + mlp
        total = params.count(params.shapes(block))
        assert total <= want, \
            f"Block({dim}, {heads}) has {total} trainable numbers, more than its pieces ({want})"


@test_case(points=0.5, hidden=True, failure_message='You need two different nn.LayerNorm(dim), norm1 and norm2: each has its own trainable scale and shift.')  # noqa: E501
def test_block_separate_norms(Block):
    import torch

    from course.handles import student
    Block = student(Block)
    for dim, heads in [(16, 2), (6, 3)]:
        block = Block(dim, heads)
        for norm in ("norm1", "norm2"):
            assert getattr(block, norm).isa(torch.nn.LayerNorm), f"{norm} is not an nn.LayerNorm"
        assert block.norm1.identity() != block.norm2.identity(), \
            "norm1 and norm2 are the same LayerNorm: make two, each has its own scale and shift"
        found = set(block.params(values=False))
        for name in ("norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"):
            assert name in found, f"PyTorch does not find {name} among the parameters of your Block"


@test_case(points=2, hidden=True, failure_message='Your Block does not compute x + attention(norm1(x)) and then x + mlp(norm2(x)): check that each norm comes before (not after) its piece, that both residual additions are there, and that norm1 and norm2 are each used once in their place.')  # noqa: E501
def test_block_values(Block):
    import torch

    from autograder.checks import params, reference
    from course.handles import close, student
    Block = student(Block)
    torch.manual_seed(2)
    for dim, heads, batch, L in [(12, 3, 2, 6), (16, 4, 3, 5), (8, 1, 1, 7)]:
        block = Block(dim, heads)
        held, names = {}, {}         # what each piece holds (one piece used twice holds the last values)
        for name in ("norm1", "attention", "norm2", "mlp"):
            piece = getattr(block, name)
            names[name] = piece.identity()
            values = params.scaled(piece.params(values=False), weight=(1.0, 0.5))
            held[names[name]] = params.put(piece, values)
        pieces = {name: held[names[name]] for name in names}
        layers = reference.mlp_layers(block.mlp.modules(), pieces["mlp"], dim)
        x = 2 * torch.randn(batch, L, dim) + 1
        with block.swapped(Attention=reference.attention):
            got = block(x)
        assert close(got, reference.block(pieces, layers[0], x, heads), atol=1e-4, rtol=1e-4), \
            f"Block({dim}, {heads}) does not compute x = x + attention(norm1(x)), then x = x + mlp(norm2(x))"


@test_case(points=1, hidden=True, failure_message="Your Block's mlp should be nn.Linear(dim, 4 * dim), then nn.GELU(), then nn.Linear(4 * dim, dim): two linear layers with a GELU between them (not ReLU, not nothing).")  # noqa: E501
def test_block_mlp(Block):
    import torch

    from autograder.checks import params, reference, work
    from course.handles import close, student
    Block = student(Block)
    torch.manual_seed(3)
    work.block_works(Block, 12, 3, 5)
    for dim, heads, batch, L in [(12, 3, 2, 5), (8, 2, 1, 4), (10, 1, 3, 3)]:
        block = Block(dim, heads)
        modules = block.mlp.modules()
        values = params.put(block.mlp, params.scaled(block.mlp.params(values=False)))
        orders = reference.mlp_layers(modules, values, dim)    # whichever order makes dim -> wide -> dim
        z = torch.randn(batch, L, dim)
        got = block.mlp(z)
        assert any(close(got, reference.mlp(values, layers, z), atol=1e-4, rtol=1e-4) for layers in orders), \
            "the mlp is not Linear, GELU, Linear"


@test_case(points=0.5, hidden=True, failure_message='Shuffling the sites of the input should only shuffle the output of Block in the same way.')  # noqa: E501
def test_block_permutation(Block):
    import torch

    from autograder.checks import properties, reference, work
    from course.handles import student
    Block = student(Block)
    torch.manual_seed(3)
    work.block_works(Block, 8, 2, 5)
    for dim, heads, L in [(12, 3, 6), (8, 2, 5)]:
        block = Block(dim, heads)
        x = torch.randn(2, L, dim)
        perm = torch.randperm(L)
        with block.swapped(Attention=reference.attention):
            properties.permutation(block, (x,), perm, site=1, atol=1e-5, rtol=1e-4)


@test_case(points=1, hidden=True, failure_message="Each sentence's output must depend only on that sentence, not on the other sentences of the batch, and one sentence alone should give the same output as in a batch: normalise over the last index of each site only.")  # noqa: E501
def test_block_batch_independence(Block):
    import torch

    from autograder.checks import reference, work
    from course.handles import close, student
    Block = student(Block)
    torch.manual_seed(5)
    work.block_works(Block, 12, 3, 5)
    block = Block(12, 3)
    x = torch.randn(4, 5, 12)
    other = x.clone()
    other[1:] = 5 * torch.randn(3, 5, 12) - 2
    with block.swapped(Attention=reference.attention):
        out = block(x)
        assert close(block(other)[0], out[0], atol=1e-5, rtol=1e-4), \
            "the output for sentence 0 changed when the other sentences of the batch changed"
        assert close(block(x[0]), out[0], atol=1e-5, rtol=1e-4), \
            "one sentence on its own should give the same output as in a batch"


@test_case(points=1, hidden=True, failure_message="Training must be able to backpropagate through your Block: the gradients reaching x and every parameter (norm1, attention, norm2, mlp) are missing, or do not match how the output changes, or backward fails. Write the residuals as x = x + ..., not x += ...: an in-place addition changes the caller's tensor and breaks backward.")  # noqa: E501
def test_block_gradients(Block):
    import torch

    from autograder.checks import params, properties, work
    from course.handles import student
    Block = student(Block)
    torch.manual_seed(7)
    work.block_works(Block, 8, 2, 4)
    dim, heads, batch, L = 8, 2, 2, 4
    block = Block(dim, heads).double()              # with your notebook's own Attention
    start = params.scaled(block.params(values=False), weight=(1.0, 0.5), dtype=torch.float64)
    block.set_params(start)
    x = 2 * torch.randn(batch, L, dim, dtype=torch.float64) + 1
    r = torch.randn(batch, L, dim, dtype=torch.float64)
    _, grads, param_grads = block.vjp(x, cotangent=r)   # backward through your Block, x a leaf
    assert type(grads[0]) is torch.Tensor, "no gradient reached the input x"
    for name in start:
        assert type(param_grads.get(name)) is torch.Tensor, f"no gradient reached {name}"
    # the gradients in two random directions of (x, parameters), against the slope of your own Block
    for _ in range(2):
        ux = torch.randn(x.shape, dtype=torch.float64)
        u = {n: torch.randn(t.shape, dtype=torch.float64) for n, t in start.items()}

        def output_at(h, u=u, ux=ux):             # your output, h along (ux, u)
            block.set_params({n: start[n] + h * u[n] for n in start})
            return block(x + h * ux)
        got = float((grads[0] * ux).sum()) + sum(float((param_grads[n] * u[n]).sum()) for n in start)
        properties.slope_agrees(got, output_at, r, 1e-5, "the gradients do not match how the output changes")
        block.set_params(start)


@test_case(points=0.5, hidden=True, failure_message='Your Block does not compute its output from x with its attention and mlp yet, or breaks the rules: build Block from your own MultiHead; nn.MultiheadAttention, nn.TransformerEncoderLayer and friends, and F.scaled_dot_product_attention are not allowed.')  # noqa: E501
def test_block_rules(Block):
    import torch

    from autograder.checks import work
    from course.handles import broken_rules, student
    Block = student(Block)
    torch.manual_seed(6)
    work.block_works(Block, 12, 3, 5)
    block = Block(12, 3)
    out = block(torch.randn(2, 5, 12))               # with your notebook's own Attention
    assert tuple(out.shape) == (2, 5, 12), "your Block does not run yet, so the rules cannot be checked"
    broken = broken_rules(Block, block)
    assert not broken, "; ".join(broken)
