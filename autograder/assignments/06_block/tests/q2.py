from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 9


@test_case(
    points=1, hidden=False,
    failure_message='block = Block(32, 4) should turn a (64, 5, 32) batch into a (64, 5, 32) batch.')
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


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'Block should keep the shape of its input, for any dim, heads, batch size and length, and for one '
        'sentence of shape (L, dim).'))
def test_block_shapes_random(Block):
    import math
    import torch
    from course.handles import student
    Block = student(Block)

    def reference_attention(q, k, v):        # Block is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    torch.manual_seed(1)
    for dim, heads, batch, L in [(12, 3, 2, 7), (8, 1, 3, 4), (20, 5, 1, 9), (6, 2, 4, 1)]:
        block = Block(dim, heads)
        with block.swapped(Attention=reference_attention):
            out = block(torch.randn(batch, L, dim))
            assert tuple(out.shape) == (batch, L, dim), \
                f"Block({dim}, {heads}) on a batch of shape {(batch, L, dim)} gave {tuple(out.shape)}"
            out = block(torch.randn(L, dim))
            assert tuple(out.shape) == (L, dim), \
                f"Block({dim}, {heads}) on one sentence of shape {(L, dim)} gave {tuple(out.shape)}"


@test_case(
    points=1, hidden=True,
    failure_message=(
        "The sizes of your Block's pieces are wrong: norm1 and norm2 are nn.LayerNorm(dim) (a scale and a "
        'shift of dim numbers each), attention is MultiHead(dim, heads), and the mlp is nn.Linear(dim, 4 * '
        'dim), nn.GELU(), nn.Linear(4 * dim, dim), both with biases; nothing else has parameters.'))
def test_block_parameter_count(Block, MultiHead):
    import math
    from course.handles import student
    Block, MultiHead = student(Block), student(MultiHead)

    def sizes(net):
        return {n: tuple(t.shape) for n, t in net.params(values=False).items()}

    def count(net):
        return sum(math.prod(s) for s in sizes(net).values())
    for dim, heads in [(32, 4), (12, 3), (10, 2), (9, 1), (24, 6)]:
        block = Block(dim, heads)
        for norm in ("norm1", "norm2"):
            n = count(getattr(block, norm))
            assert n == 2 * dim, f"{norm} of Block({dim}, {heads}) has {n} trainable numbers, not 2 * {dim}"
        attention = sizes(MultiHead(dim, heads))        # as your notebook's MultiHead makes it
        assert sizes(block.attention) == attention, f"attention of Block({dim}, {heads}) is not a MultiHead({dim}, {heads})"
        mlp = dim * 4 * dim + 4 * dim + 4 * dim * dim + dim
        n = count(block.mlp)
        assert n == mlp, f"the mlp of Block({dim}, {heads}) has {n} trainable numbers, not {mlp} (dim -> 4 * dim -> dim, with biases)"
        want = 4 * dim + sum(math.prod(s) for s in attention.values()) + mlp
        total = count(block)
        assert total <= want, f"Block({dim}, {heads}) has {total} trainable numbers, more than its pieces ({want})"


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'You need two different nn.LayerNorm(dim), norm1 and norm2: each has its own trainable scale and '
        'shift.'))
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


@test_case(
    points=2, hidden=True,
    failure_message=(
        'Your Block does not compute x + attention(norm1(x)) and then x + mlp(norm2(x)): check that each norm'
        ' comes before (not after) its piece, that both residual additions are there, and that norm1 and '
        'norm2 are each used once in their place.'))
def test_block_values(Block):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Block = student(Block)

    def reference_attention(q, k, v):        # Block is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    def random_like(name, t):
        if t.dim() > 1:
            return 1.5 * torch.randn(t.shape) / math.sqrt(t.shape[-1])
        return (1.0 if name.endswith("weight") else 0.0) + 0.5 * torch.randn(t.shape)

    def put_random(net):                      # new values for every parameter of net; returns them
        values = {n: random_like(n, t) for n, t in net.params(values=False).items()}
        net.set_params(values)
        return values

    def linear(values, prefix, z):            # z through the layer whose parameters the check set
        assert prefix + "weight" in values, f"Block({dim}, {heads}) has no {prefix}weight where the check expects one"
        w = values[prefix + "weight"]
        assert w.dim() == 2 and w.shape[1] == z.shape[-1], f"a layer of Block({dim}, {heads}) does not take vectors of length {z.shape[-1]}"
        return z @ w.T + values.get(prefix + "bias", 0)

    def norm(values, z):
        assert "weight" in values and "bias" in values, f"a norm of Block({dim}, {heads}) has no scale or shift"
        return F.layer_norm(z, (dim,), values["weight"], values["bias"], eps=1e-5)

    def attention(values, z):                 # MultiHead: every head on z, side by side, then mix
        outs = [reference_attention(*(linear(values, f"heads.{i}.{m}.", z) for m in "QKV"))[0] for i in range(heads)]
        return linear(values, "mix.", torch.cat(outs, dim=-1))
    linear_class = f"{torch.nn.Linear.__module__}.{torch.nn.Linear.__qualname__}"
    torch.manual_seed(2)
    for dim, heads, batch, L in [(12, 3, 2, 6), (16, 4, 3, 5), (8, 1, 1, 7)]:
        block = Block(dim, heads)
        held, names = {}, {}                  # what each piece holds (one piece used twice holds the last values)
        for name in ("norm1", "attention", "norm2", "mlp"):
            piece = getattr(block, name)
            names[name] = piece.identity()
            held[names[name]] = put_random(piece)
        norm1, attn, norm2, mlp = (held[names[n]] for n in ("norm1", "attention", "norm2", "mlp"))
        paths = [p for p, classes in block.mlp.modules().items() if linear_class in classes]
        assert len(paths) == 2, f"the mlp of Block({dim}, {heads}) has {len(paths)} nn.Linear layers, not 2"
        prefixes = [f"{p}." if p else "" for p in paths]
        fits = [(a, b) for a, b in (prefixes, prefixes[::-1])
                if mlp[a + "weight"].shape[1] == dim and mlp[b + "weight"].shape[0] == dim
                and mlp[a + "weight"].shape[0] == mlp[b + "weight"].shape[1]]
        assert fits, f"the mlp's two nn.Linear layers do not go from {dim} to a width and back to {dim}"
        x = 2 * torch.randn(batch, L, dim) + 1
        with block.swapped(Attention=reference_attention):
            got = block(x)
        h = x + attention(attn, norm(norm1, x))
        z = norm(norm2, h)                    # the mlp: Linear, GELU, Linear
        want = h + linear(mlp, fits[0][1], F.gelu(linear(mlp, fits[0][0], z)))
        assert close(got, want, atol=1e-4, rtol=1e-4), \
            f"Block({dim}, {heads}) does not compute x = x + attention(norm1(x)), then x = x + mlp(norm2(x))"


@test_case(
    points=1, hidden=True,
    failure_message=(
        "Your Block's mlp should be nn.Linear(dim, 4 * dim), then nn.GELU(), then nn.Linear(4 * dim, dim): "
        'two linear layers with a GELU between them (not ReLU, not nothing).'))
def test_block_mlp(Block):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Block = student(Block)

    def reference_attention(q, k, v):        # Block is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    def does_work(dim, heads, L):
        """Your Block computes from x with its attention and its mlp (a constant, x itself, x plus
        a constant, only one of the two steps or fresh random numbers do not)."""
        block = Block(dim, heads)

        def randomize(net):                   # new values for every parameter of net
            net.set_params({n: 1.5 * torch.randn(t.shape) / math.sqrt(t.shape[-1]) if t.dim() > 1
                            else 0.5 * torch.randn(t.shape) for n, t in net.params(values=False).items()})
        randomize(block)
        x, y = torch.randn(2, L, dim), torch.randn(2, L, dim)
        with block.swapped(Attention=reference_attention):
            out, again, other = block(x), block(x), block(y)
            randomize(block.attention)
            talked = block(x)
            randomize(block.mlp)
            thought = block(x)
        assert close(again, out, atol=1e-6, rtol=1e-5), "your Block gives another output each time it is called on the same x"
        assert not close(other, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when x changes"
        assert not close(talked, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when its attention changes"
        assert not close(thought, talked, atol=1e-3, rtol=1e-3), "your Block's output does not change when its mlp changes"

    linear = f"{torch.nn.Linear.__module__}.{torch.nn.Linear.__qualname__}"
    torch.manual_seed(3)
    does_work(12, 3, 5)
    for dim, heads, batch, L in [(12, 3, 2, 5), (8, 2, 1, 4), (10, 1, 3, 3)]:
        block = Block(dim, heads)
        paths = [p for p, classes in block.mlp.modules().items() if linear in classes]
        assert len(paths) == 2, f"the mlp has {len(paths)} nn.Linear layers, not 2"
        values = {n: 1.5 * torch.randn(t.shape) / math.sqrt(t.shape[-1]) if t.dim() > 1 else 0.5 * torch.randn(t.shape)
                  for n, t in block.mlp.params(values=False).items()}
        block.mlp.set_params(values)
        layers = [(values.get(f"{p}.weight" if p else "weight"), values.get(f"{p}.bias" if p else "bias")) for p in paths]
        assert all(w is not None for w, _ in layers), "an nn.Linear of the mlp has no weight"
        z = torch.randn(batch, L, dim)
        got = block.mlp(z)
        wants = []
        for (w1, b1), (w2, b2) in (layers, layers[::-1]):     # whichever order makes dim -> wide -> dim
            if w1.shape[1] == dim and w2.shape[0] == dim and w1.shape[0] == w2.shape[1]:
                u = z @ w1.T + (0 if b1 is None else b1)
                wants.append(F.gelu(u) @ w2.T + (0 if b2 is None else b2))
        assert wants, f"the mlp's two nn.Linear layers do not go from {dim} to a width and back to {dim}"
        assert any(close(got, want, atol=1e-4, rtol=1e-4) for want in wants), \
            "the mlp is not Linear, GELU, Linear"


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'Shuffling the sites of the input should only shuffle the output of Block in the same way.'))
def test_block_permutation(Block):
    import math
    import torch
    from course.handles import student, close
    Block = student(Block)

    def reference_attention(q, k, v):        # Block is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    def does_work(dim, heads, L):
        """Your Block computes from x with its attention and its mlp (a constant, x itself, x plus
        a constant, only one of the two steps or fresh random numbers do not)."""
        block = Block(dim, heads)

        def randomize(net):                   # new values for every parameter of net
            net.set_params({n: 1.5 * torch.randn(t.shape) / math.sqrt(t.shape[-1]) if t.dim() > 1
                            else 0.5 * torch.randn(t.shape) for n, t in net.params(values=False).items()})
        randomize(block)
        x, y = torch.randn(2, L, dim), torch.randn(2, L, dim)
        with block.swapped(Attention=reference_attention):
            out, again, other = block(x), block(x), block(y)
            randomize(block.attention)
            talked = block(x)
            randomize(block.mlp)
            thought = block(x)
        assert close(again, out, atol=1e-6, rtol=1e-5), "your Block gives another output each time it is called on the same x"
        assert not close(other, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when x changes"
        assert not close(talked, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when its attention changes"
        assert not close(thought, talked, atol=1e-3, rtol=1e-3), "your Block's output does not change when its mlp changes"

    torch.manual_seed(3)
    does_work(8, 2, 5)
    for dim, heads, L in [(12, 3, 6), (8, 2, 5)]:
        block = Block(dim, heads)
        x = torch.randn(2, L, dim)
        perm = torch.randperm(L)
        with block.swapped(Attention=reference_attention):
            out = block(x)
            shuffled = block(x[:, perm])
        assert close(shuffled, out[:, perm], atol=1e-5, rtol=1e-4), \
            "reordering the sites should just reorder the output of Block"


@test_case(
    points=1, hidden=True,
    failure_message=(
        "Each sentence's output must depend only on that sentence, not on the other sentences of the batch, "
        'and one sentence alone should give the same output as in a batch: normalise over the last index of '
        'each site only.'))
def test_block_batch_independence(Block):
    import math
    import torch
    from course.handles import student, close
    Block = student(Block)

    def reference_attention(q, k, v):        # Block is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    def does_work(dim, heads, L):
        """Your Block computes from x with its attention and its mlp (a constant, x itself, x plus
        a constant, only one of the two steps or fresh random numbers do not)."""
        block = Block(dim, heads)

        def randomize(net):                   # new values for every parameter of net
            net.set_params({n: 1.5 * torch.randn(t.shape) / math.sqrt(t.shape[-1]) if t.dim() > 1
                            else 0.5 * torch.randn(t.shape) for n, t in net.params(values=False).items()})
        randomize(block)
        x, y = torch.randn(2, L, dim), torch.randn(2, L, dim)
        with block.swapped(Attention=reference_attention):
            out, again, other = block(x), block(x), block(y)
            randomize(block.attention)
            talked = block(x)
            randomize(block.mlp)
            thought = block(x)
        assert close(again, out, atol=1e-6, rtol=1e-5), "your Block gives another output each time it is called on the same x"
        assert not close(other, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when x changes"
        assert not close(talked, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when its attention changes"
        assert not close(thought, talked, atol=1e-3, rtol=1e-3), "your Block's output does not change when its mlp changes"

    torch.manual_seed(5)
    does_work(12, 3, 5)
    block = Block(12, 3)
    x = torch.randn(4, 5, 12)
    other = x.clone()
    other[1:] = 5 * torch.randn(3, 5, 12) - 2
    with block.swapped(Attention=reference_attention):
        out = block(x)
        assert close(block(other)[0], out[0], atol=1e-5, rtol=1e-4), \
            "the output for sentence 0 changed when the other sentences of the batch changed"
        assert close(block(x[0]), out[0], atol=1e-5, rtol=1e-4), \
            "one sentence on its own should give the same output as in a batch"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'Training must be able to backpropagate through your Block: the gradients reaching x and every '
        'parameter (norm1, attention, norm2, mlp) are missing, or do not match how the output changes, or '
        'backward fails. Write the residuals as x = x + ..., not x += ...: an in-place addition changes the '
        "caller's tensor and breaks backward."))
def test_block_gradients(Block):
    import math
    import torch
    from course.handles import student, close
    Block = student(Block)

    def reference_attention(q, k, v):        # Block is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    def does_work(dim, heads, L):
        """Your Block computes from x with its attention and its mlp (a constant, x itself, x plus
        a constant, only one of the two steps or fresh random numbers do not)."""
        block = Block(dim, heads)

        def randomize(net):                   # new values for every parameter of net
            net.set_params({n: 1.5 * torch.randn(t.shape) / math.sqrt(t.shape[-1]) if t.dim() > 1
                            else 0.5 * torch.randn(t.shape) for n, t in net.params(values=False).items()})
        randomize(block)
        x, y = torch.randn(2, L, dim), torch.randn(2, L, dim)
        with block.swapped(Attention=reference_attention):
            out, again, other = block(x), block(x), block(y)
            randomize(block.attention)
            talked = block(x)
            randomize(block.mlp)
            thought = block(x)
        assert close(again, out, atol=1e-6, rtol=1e-5), "your Block gives another output each time it is called on the same x"
        assert not close(other, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when x changes"
        assert not close(talked, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when its attention changes"
        assert not close(thought, talked, atol=1e-3, rtol=1e-3), "your Block's output does not change when its mlp changes"

    torch.manual_seed(7)
    does_work(8, 2, 4)
    dim, heads, batch, L = 8, 2, 2, 4
    block = Block(dim, heads).double()              # with your notebook's own Attention
    start = {n: 1.5 * torch.randn(t.shape, dtype=torch.float64) / math.sqrt(t.shape[-1]) if t.dim() > 1
             else 1.0 * n.endswith("weight") + 0.5 * torch.randn(t.shape, dtype=torch.float64)
             for n, t in block.params(values=False).items()}
    block.set_params(start)
    x = 2 * torch.randn(batch, L, dim, dtype=torch.float64) + 1
    r = torch.randn(batch, L, dim, dtype=torch.float64)
    _, grads, param_grads = block.vjp(x, cotangent=r)   # backward through your Block, x a leaf that needs gradients
    assert type(grads[0]) is torch.Tensor, "no gradient reached the input x"
    for name in start:
        assert type(param_grads.get(name)) is torch.Tensor, f"no gradient reached {name}"
    # the gradients in two random directions of (x, parameters), compared with the slope of your
    # own Block measured by finite differences
    eps = 1e-5
    for _ in range(2):
        ux = torch.randn(x.shape, dtype=torch.float64)
        u = {n: torch.randn(t.shape, dtype=torch.float64) for n, t in start.items()}
        block.set_params({n: start[n] + eps * u[n] for n in start})
        plus = block(x + eps * ux)
        block.set_params({n: start[n] - eps * u[n] for n in start})
        minus = block(x - eps * ux)
        block.set_params(start)
        slope = float(((plus - minus) * r).sum()) / (2 * eps)
        got = float((grads[0] * ux).sum()) + sum(float((param_grads[n] * u[n]).sum()) for n in start)
        assert abs(got - slope) < 1e-5 * (1 + abs(slope)), "the gradients do not match how the output changes"


@test_case(
    points=0.5, hidden=True,
    failure_message=(
        'Your Block does not compute its output from x with its attention and mlp yet, or breaks the rules: '
        'build Block from your own MultiHead; nn.MultiheadAttention, nn.TransformerEncoderLayer and friends, '
        'and F.scaled_dot_product_attention are not allowed.'))
def test_block_rules(Block):
    import math
    import torch
    from course.handles import student, broken_rules, close
    Block = student(Block)

    def reference_attention(q, k, v):        # Block is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    def does_work(dim, heads, L):
        """Your Block computes from x with its attention and its mlp (a constant, x itself, x plus
        a constant, only one of the two steps or fresh random numbers do not)."""
        block = Block(dim, heads)

        def randomize(net):                   # new values for every parameter of net
            net.set_params({n: 1.5 * torch.randn(t.shape) / math.sqrt(t.shape[-1]) if t.dim() > 1
                            else 0.5 * torch.randn(t.shape) for n, t in net.params(values=False).items()})
        randomize(block)
        x, y = torch.randn(2, L, dim), torch.randn(2, L, dim)
        with block.swapped(Attention=reference_attention):
            out, again, other = block(x), block(x), block(y)
            randomize(block.attention)
            talked = block(x)
            randomize(block.mlp)
            thought = block(x)
        assert close(again, out, atol=1e-6, rtol=1e-5), "your Block gives another output each time it is called on the same x"
        assert not close(other, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when x changes"
        assert not close(talked, out, atol=1e-3, rtol=1e-3), "your Block's output does not change when its attention changes"
        assert not close(thought, talked, atol=1e-3, rtol=1e-3), "your Block's output does not change when its mlp changes"

    torch.manual_seed(6)
    does_work(12, 3, 5)
    block = Block(12, 3)
    out = block(torch.randn(2, 5, 12))               # with your notebook's own Attention
    assert tuple(out.shape) == (2, 5, 12), "your Block does not run yet, so the rules cannot be checked"
    broken = broken_rules(Block, block)
    assert not broken, "; ".join(broken)
