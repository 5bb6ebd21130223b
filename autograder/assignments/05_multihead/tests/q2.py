from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 8


@test_case(points=1, hidden=False, failure_message='multi = MultiHead(32, 4) should turn a (64, 5, 32) batch into a (64, 5, 32) batch.')  # noqa: E501
def test_multihead_shape(MultiHead):
    import math

    import torch

    from course.handles import student
    MultiHead = student(MultiHead)

    def reference_attention(q, k, v):        # MultiHead is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    torch.manual_seed(0)
    multi = MultiHead(32, 4)
    with multi.swapped(Attention=reference_attention):
        out = multi(torch.randn(64, 5, 32))
    assert tuple(out.shape) == (64, 5, 32), \
        f"MultiHead(32, 4) on a (64, 5, 32) batch should give (64, 5, 32), yours gives {tuple(out.shape)}"


@test_case(points=1, hidden=True, failure_message='MultiHead should keep the shape of its input, for any dim, heads, batch and length, and also for one sentence of shape (L, dim): join the heads with torch.cat(..., dim=-1).')  # noqa: E501
def test_multihead_shapes_random(MultiHead):
    import torch

    from autograder.checks import properties
    from course.handles import student
    MultiHead = student(MultiHead)
    torch.manual_seed(1)
    properties.keeps_shape(MultiHead, [(12, 3, 2, 7), (8, 1, 3, 4), (20, 5, 1, 9), (6, 2, 5, 1)], "MultiHead")


@test_case(points=1, hidden=True, failure_message="The sizes of your MultiHead's pieces are wrong: self.heads should hold heads heads, each a Head(dim, dim // heads) (three matrices of (dim // heads) x dim), and self.mix should be nn.Linear(dim, dim) with its bias; nothing else has parameters.")  # noqa: E501
def test_multihead_parameter_count(MultiHead, Head):
    import torch

    from autograder.checks import params
    from course.handles import student
    MultiHead, Head = student(MultiHead), student(Head)
    for dim, heads in [(32, 4), (12, 3), (10, 2), (9, 1), (24, 6)]:
        multi = MultiHead(dim, heads)
        one = params.shapes(Head(dim, dim // heads))            # a head, as your notebook's Head makes it
        assert len(multi.heads) == heads, f"MultiHead({dim}, {heads}) has {len(multi.heads)} heads"
        for i in range(heads):
            assert params.shapes(multi.heads[i]) == one, \
                f"head {i} of MultiHead({dim}, {heads}) is not a Head({dim}, {dim // heads})"
        assert multi.mix.isa(torch.nn.Linear) \
            and params.shapes(multi.mix) == {"weight": (dim, dim), "bias": (dim,)}, \
            f"mix of MultiHead({dim}, {heads}) is not nn.Linear({dim}, {dim}) with its bias"
        want = heads * params.count(one) + dim * dim + dim
        total = params.count(params.shapes(multi))
        assert total <= want, \
            f"MultiHead({dim}, {heads}) has {total} trainable numbers, more than its heads and mix ({want})"


@test_case(points=1, hidden=True, failure_message="self.heads must be an nn.ModuleList of separate heads, one new Head for each (a list comprehension, not [Head(...)] * heads), so that PyTorch finds every head's matrices among the parameters.")  # noqa: E501
def test_multihead_separate_registered_heads(MultiHead):
    import torch

    from course.handles import student
    MultiHead = student(MultiHead)
    for dim, heads in [(12, 3), (8, 2), (10, 5)]:
        multi = MultiHead(dim, heads)
        assert multi.heads.isa(torch.nn.ModuleList), \
            "self.heads is not an nn.ModuleList, so PyTorch does not find the heads"
        n = len(multi.heads)
        assert len({multi.heads[i].identity() for i in range(n)}) == n, \
            "your heads are all the same head: make a new Head for each one"
        found = set(multi.params(values=False))
        for i in range(n):
            for name in multi.heads[i].params(values=False):
                assert f"heads.{i}.{name}" in found, \
                    f"PyTorch does not find heads[{i}].{name} among the parameters of " \
                    f"MultiHead({dim}, {heads})"


@test_case(points=2, hidden=True, failure_message="Your MultiHead does not compute self.mix(torch.cat([head(x) for head in self.heads], dim=-1)): check that every head gets the same x, that the outputs are glued along the last index in order, that mix is applied, and that after a call each head's .weights holds its weights for that input.")  # noqa: E501
def test_multihead_values(MultiHead):
    import torch

    from autograder.checks import params, reference
    from course.handles import close, student
    MultiHead = student(MultiHead)

    def put_random(net):                      # new values for every parameter of net; returns them
        return params.put(net, params.scaled(net.params(values=False), weight=(0, 1.0), bias=(0, 1.0)))
    torch.manual_seed(2)
    for dim, heads, batch, L in [(12, 3, 2, 6), (16, 4, 3, 5), (10, 2, 1, 7), (8, 1, 2, 4)]:
        multi = MultiHead(dim, heads)
        assert len(multi.heads) == heads, f"MultiHead({dim}, {heads}) has {len(multi.heads)} heads"
        held, order = {}, []             # the values each head holds (one head used twice holds the last)
        for i in range(heads):
            head = multi.heads[i]
            order.append(head.identity())
            held[order[-1]] = put_random(head)
        mix = put_random(multi.mix)
        x = torch.randn(batch, L, dim)
        with multi.swapped(Attention=reference.attention):
            got = multi(x)
            saved = [multi.heads[i].weights.get() for i in range(heads)]
        values = {f"heads.{i}.{n}": t for i in range(heads) for n, t in held[order[i]].items()}
        want, weights = reference.multihead({**values, **{f"mix.{n}": t for n, t in mix.items()}}, x, heads)
        assert close(got, want, atol=1e-4, rtol=1e-4), f"MultiHead({dim}, {heads}) does not give its " \
            "heads' outputs glued side by side (in order, along the last index), then mixed by self.mix"
        for i, (w, w_want) in enumerate(zip(saved, weights, strict=True)):
            assert close(w, w_want, atol=1e-5, rtol=1e-4), f"after a call of MultiHead({dim}, {heads}), " \
                f"heads[{i}].weights does not hold that head's weights for this input"


@test_case(points=1, hidden=True, failure_message='Shuffling the sites of the input should only shuffle the output of MultiHead in the same way (like Attention).')  # noqa: E501
def test_multihead_permutation(MultiHead):
    import torch

    from autograder.checks import properties, reference, work
    from course.handles import student
    MultiHead = student(MultiHead)
    torch.manual_seed(3)
    work.multihead_works(MultiHead, 12, 3, 6)
    for dim, heads, L in [(12, 3, 6), (10, 5, 4)]:
        multi = MultiHead(dim, heads)
        x = torch.randn(2, L, dim)
        perm = torch.randperm(L)
        with multi.swapped(Attention=reference.attention):
            properties.permutation(multi, (x,), perm, site=1, atol=1e-5, rtol=1e-4)


@test_case(points=1, hidden=True, failure_message='Your MultiHead does not compute its output from x with its heads and mix yet, or breaks the rules: build MultiHead from your own heads; nn.MultiheadAttention, nn.Transformer... and F.scaled_dot_product_attention are not allowed.')  # noqa: E501
def test_multihead_rules(MultiHead):
    import torch

    from autograder.checks import work
    from course.handles import broken_rules, student
    MultiHead = student(MultiHead)
    torch.manual_seed(4)
    work.multihead_works(MultiHead, 12, 3, 5)
    multi = MultiHead(12, 3)
    out = multi(torch.randn(2, 5, 12))               # with your notebook's own Attention
    assert tuple(out.shape) == (2, 5, 12), "your MultiHead does not run yet, so the rules cannot be checked"
    broken = broken_rules(MultiHead, multi)
    assert not broken, "; ".join(broken)
