from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 12


@test_case(points=1, hidden=False, failure_message='Attention(q, k, v, causal=True) should give weights that are zero above the diagonal and whose rows add up to one.')  # noqa: E501
def test_causal_attention_basic(Attention):
    import torch

    from course.handles import close, student
    Attention = student(Attention)
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 8)
    out, w = Attention(q, k, v, causal=True)
    assert type(out) is torch.Tensor and type(w) is torch.Tensor and tuple(out.shape) == (5, 8) \
        and tuple(w.shape) == (5, 5), \
        "Attention(q, k, v, causal=True) should return out (5, 8) and weights (5, 5)"
    assert not torch.isnan(w).any(), "your causal weights contain NaN: is the diagonal (j = i) still allowed?"
    assert close(w.sum(-1), torch.ones(5)), "the rows of your causal weights should still add up to one"
    assert (w.triu(1) == 0).all(), \
        "with causal=True the weights above the diagonal (j > i) should be exactly zero"
    q2, k2 = torch.randn(2, 5, 8)
    for other in (Attention(q2, k, v, causal=True), Attention(q, k2, v, causal=True)):
        w2 = other[1] if type(other) in (tuple, list) and len(other) == 2 else None
        assert type(w2) is torch.Tensor and tuple(w2.shape) == (5, 5) and not close(w2, w, atol=1e-4), \
            "your causal weights should depend on q and k (the Boltzmann weights of q_i . k_j over j <= " \
            "i), not be the same whatever they are"


@test_case(points=2, hidden=True, failure_message='Your Attention with causal=True should set the energies with j > i to infinity (the dot products to -inf) before the softmax, keep the diagonal, and still divide by sqrt(d), for one sentence and for a batch; with causal=False (the default) nothing changes.')  # noqa: E501
def test_causal_attention_values(Attention):
    import torch

    from autograder.checks import reference
    from course.handles import close, student
    Attention = student(Attention)
    torch.manual_seed(1)
    for shape in [(6, 4), (2, 7, 8), (2, 3, 5, 6), (1, 3)]:
        q, k, v = (torch.randn(*shape) for _ in range(3))
        q = 3 * q
        for causal in (False, True):
            want_out, want_w = reference.causal_attention(q, k, v, causal=causal)
            out, w = Attention(q, k, v, causal=causal)
            assert type(w) is torch.Tensor and tuple(w.shape) == tuple(want_w.shape), \
                f"weights of shape {tuple(getattr(w, 'shape', ()))} for inputs of shape {shape}"
            assert not torch.isnan(w).any() and not torch.isnan(out).any(), \
                f"with causal={causal} your Attention gives NaN"
            assert close(w, want_w), f"with causal={causal} your weights are not the Boltzmann weights " \
                "exp(q_i . k_j / sqrt(d)) over the allowed j (all j, or j <= i when causal)"
            assert close(out, want_out), f"with causal={causal} your output is not weights @ v"
        out, w = Attention(q, k, v)
        assert close(w, reference.causal_attention(q, k, v)[1]), \
            "Attention(q, k, v) without causal should work exactly as before (causal=False by default)"


@test_case(points=1, hidden=True, failure_message='With causal=True the output at site i must not depend at all on q, k, v at sites after i: its derivative with respect to them must be exactly zero, not just tiny. Put the infinite energies in before the softmax: if you take the softmax of all the sites and then zero the future and renormalise (or subtract a maximum taken over all the sites), the weights look right but rounding leaks a tiny gradient (about 1e-7 to 1e-5) to the future.')  # noqa: E501
def test_causal_gradient(Attention, Head):
    import torch

    from autograder.checks import causal
    from course.handles import StudentError, student
    Attention, Head = student(Attention), student(Head)
    torch.manual_seed(6)
    causal.switch_gates(Attention, Head, "so its derivatives cannot count")
    for B, L, d in [(2, 6, 5), (1, 9, 4)]:
        q, k, v = torch.randn(3, B, L, d)
        q = 3 * q
        try:
            out, w = Attention(q, k, v, causal=True)
        except (StudentError, TypeError, ValueError):
            continue        # it does not run here: the values tests say so
        if type(w) is not torch.Tensor or tuple(w.shape) != (B, L, L) or not (w.triu(1) == 0).all():
            continue        # the weights themselves are not causal yet: the values tests say so
        for i in range(L - 1):
            r = torch.zeros(B, L, d)
            r[:, i] = torch.randn(B, d)                # the derivative of output i only
            _, grads, _ = Attention.vjp(q, k, v, causal=True, cotangent=(r, None))
            assert all(type(g) is torch.Tensor for g in grads), \
                "no gradient reached q, k or v: don't detach anything inside Attention"
            for name, g in zip("qkv", grads, strict=False):
                assert (g[:, i + 1:] == 0).all(), f"the output at site {i} has a nonzero derivative (up to " \
                    f"{g[:, i + 1:].abs().max().item():.1e}) with respect to {name} at later sites: your " \
                    "attention is not exactly causal"
            assert grads[2][:, :i + 1].abs().max() > 0, \
                f"the output at site {i} should depend on v at sites 0 to {i}"
            if i > 0:
                assert grads[0][:, i].abs().max() > 0 and grads[1][:, :i + 1].abs().max() > 0, \
                    f"the output at site {i} should depend on q at site {i} and on k at sites 0 to {i}"


@test_case(points=0.5, hidden=True, failure_message='Make the mask on the same device as q (torch.ones(L, L, dtype=torch.bool, device=q.device)): on a GPU a mask made on the CPU breaks your causal Attention.')  # noqa: E501
def test_causal_attention_device(Attention, Head):
    import torch

    from autograder.checks import causal, properties
    from course.handles import student
    Attention, Head = student(Attention), student(Head)
    torch.manual_seed(8)
    causal.switch_gates(Attention, Head, "so the causal mask's device cannot be checked")
    q, k, v = (torch.empty(2, 5, 8, device="meta") for _ in range(3))    # another device: shapes only
    got = properties.on_another_device(Attention, q, k, v, causal=True, mixing=(
        "with q, k and v on another device your causal Attention makes a tensor on the CPU: make the mask "
        "with device=q.device"))
    shapes = [d.get("shape") for d in got] if type(got) is list and len(got) == 2 else None
    assert shapes == [[2, 5, 8], [2, 5, 5]], "your causal Attention gives the wrong shapes on another device"


@test_case(points=1.5, hidden=True, failure_message='Head(dim, head_dim, causal=True) should be causal: save causal as self.causal in __init__ and pass it on to Attention in forward (Attention(self.Q(x), self.K(x), self.V(x), causal=self.causal)); without it (the default) nothing changes, and self.weights keeps the weights, detached. (This is checked with a correct Attention in place of yours, so a mistake in your Attention does not count here.)')  # noqa: E501
def test_causal_head(Head):
    import math

    import torch

    from autograder.checks import reference
    from course.handles import StudentError, close, student
    Head = student(Head)
    torch.manual_seed(2)
    for causal, dim, head_dim, shape in [(True, 12, 4, (2, 6)), (False, 12, 4, (2, 6)), (None, 8, 8, (3, 5)),
                                         (True, 10, 5, (7,))]:
        head = Head(dim, head_dim) if causal is None else Head(dim, head_dim, causal=causal)
        head.set_params({name: 3 * torch.randn(t.shape) / math.sqrt(dim)
                         for name, t in head.params(values=False).items()})
        p = head.params()
        x = torch.randn(*shape, dim)
        q, k, v = x @ p["Q.weight"].T, x @ p["K.weight"].T, x @ p["V.weight"].T
        want_out, want_w = reference.causal_attention(q, k, v, causal=bool(causal))
        with head.swapped(Attention=reference.causal_attention):
            out = head(x)
            w = head.weights.get()
        how = "Head(dim, head_dim)" if causal is None else f"Head(dim, head_dim, causal={causal})"
        assert type(out) is torch.Tensor and tuple(out.shape) == tuple(want_out.shape), \
            f"{how} gives output of shape {tuple(getattr(out, 'shape', ()))}, " \
            f"expected {tuple(want_out.shape)}"
        assert close(out, want_out, atol=1e-5), \
            f"{how} does not give the right output: is causal saved as self.causal and passed to Attention?" \
            if causal else f"{how} should not be causal (causal=False by default)"
        assert close(w, want_w, atol=1e-5), f"{how} does not keep the weights from Attention in self.weights"
    try:                                # with your own Attention: the saved weights are detached
        head(x)
        saved = head.weights.info()
    except StudentError:
        saved = None                    # your Attention does not run: its own tests say so
    assert saved is None or not saved.get("requires_grad"), \
        "the saved weights should be detached: self.weights = weights.detach()"


@test_case(points=1.5, hidden=True, failure_message='MultiHead(dim, heads, causal=True) should hand causal on to every one of its heads, so that the output at site i does not depend on the sites after i; MultiHead(dim, heads) (causal=False by default) should not be causal. (This is checked with a correct Attention in place of yours; and if your Head is what goes wrong, MultiHead only has to hand causal on to it.)')  # noqa: E501
def test_causal_multihead(MultiHead, Head):
    import torch

    from autograder.checks import causal
    from course.handles import student
    MultiHead, Head = student(MultiHead), student(Head)
    torch.manual_seed(3)
    causal.hands_on(causal.MULTIHEAD, MultiHead, Head, [(12, 3), (8, 1)])


@test_case(points=1.5, hidden=True, failure_message='Block(dim, heads, causal=True) should hand causal on to its MultiHead: then the output at site i cannot depend on sites after i; Block(dim, heads) (causal=False by default) should let every site hear every other. (This is checked with a correct Attention in place of yours; and if your MultiHead or Head is what goes wrong, Block only has to hand causal on to MultiHead.)')  # noqa: E501
def test_causal_block(Block, MultiHead):
    import torch

    from autograder.checks import causal
    from course.handles import student
    Block, MultiHead = student(Block), student(MultiHead)
    torch.manual_seed(4)
    causal.hands_on(causal.BLOCK, Block, MultiHead, [(12, 3), (8, 2)])


@test_case(points=1.5, hidden=True, failure_message='MyTransformer(..., causal=True) should hand causal down to every Block: then the logits at position i do not change when later tokens change, and there is no NaN. Without causal (the default) every position hears every other. (This is checked with a correct Attention in place of yours; and if your Block, MultiHead or Head is what goes wrong, MyTransformer only has to hand causal on to its blocks.)')  # noqa: E501
def test_causal_mytransformer(MyTransformer, Block):
    import torch

    from autograder.checks import causal
    from course.handles import student
    MyTransformer, Block = student(MyTransformer), student(Block)
    torch.manual_seed(5)
    causal.hands_on(causal.MY_TRANSFORMER, MyTransformer, Block, [(11, 12, 3, 3), (7, 8, 2, 1)])


@test_case(points=0.5, hidden=True, failure_message='The causal switch adds no parameters: a causal MyTransformer(2002) has the same 1,314,514 as before.')  # noqa: E501
def test_causal_count(MyTransformer):
    from course.handles import student
    MyTransformer = student(MyTransformer)
    got = sum(t.numel() for t in MyTransformer(2002, causal=True).params(values=False).values())
    assert got == 1314514, \
        "a causal MyTransformer(2002) should have the same 1,314,514 parameters as before (the switch " \
        f"adds none); yours has {got:,}"


@test_case(points=0.5, hidden=True, failure_message="With the network on another device (a GPU), your causal MyTransformer makes a tensor on the CPU: make the positions with torch.arange(L, device=x.device). (This is checked with a correct Attention in place of yours: the mask's device is Attention's test.)")  # noqa: E501
def test_causal_mytransformer_device(MyTransformer, Attention, Head):
    import torch

    from autograder.checks import Hint, causal, properties, reference
    from course.handles import student
    MyTransformer, Attention, Head = student(MyTransformer), student(Attention), student(Head)
    torch.manual_seed(9)
    causal.switch_gates(Attention, Head, "so the causal network's device cannot be checked", attention=False)
    network = lambda: MyTransformer(9, dim=8, heads=2, layers=2, causal=True)
    x, y = torch.randint(9, (2, 6)), torch.randint(9, (2, 6))
    if not causal.own_work(MyTransformer, "Block", network, x, y, causal.MY_TRANSFORMER.groups, (8, 8)):
        raise Hint("your causal MyTransformer does not compute yet (its logits should change with the tokens "
                   "and use self.embed, self.blocks and self.out), so its device cannot be checked")
    net = MyTransformer(9, dim=8, heads=2, layers=2, causal=True)
    net.to("meta")                                  # another device ("meta": shapes only)
    for block in net.blocks:
        block.to("meta")
    with net.swapped(Attention=reference.causal_attention):
        out = properties.on_another_device(net, torch.zeros(2, 5, dtype=torch.long, device="meta"), mixing=(
            "with the network and x on another device your causal network makes a tensor on the CPU: make "
            "the positions with device=x.device"))
    assert type(out) is dict and out.get("shape") == [2, 5, 9], \
        "your causal MyTransformer gives the wrong shape on another device"


@test_case(points=0.5, hidden=True, failure_message='The rules: the causal mask is yours to write; F.scaled_dot_product_attention(is_causal=True), nn.MultiheadAttention and nn.Transformer... are not allowed anywhere in Attention, Head, MultiHead, Block or MyTransformer.')  # noqa: E501
def test_causal_rules(Attention, Head, MultiHead, Block, MyTransformer):
    import torch

    from autograder.checks import causal
    from course.handles import StudentError, broken_rules, student
    Attention, Head, MultiHead, Block, MyTransformer = (
        student(x) for x in (Attention, Head, MultiHead, Block, MyTransformer))
    torch.manual_seed(7)
    out, w = Attention(*torch.randn(3, 4, 6), causal=True)
    assert type(out) is torch.Tensor, "your Attention does not run yet, so the rules cannot be checked"
    causal.switch_gates(Attention, Head, "so the rules cannot be checked")
    nets = []
    try:                                  # run the network too, so that what runs is seen as well
        net = MyTransformer(9, dim=8, heads=2, layers=2, causal=True)
        nets.append(net)
        net(torch.randint(9, (2, 5)))
    except StudentError:
        pass
    pieces = [x for x in (Attention, Head, MultiHead, Block, MyTransformer) if x is not None]
    broken = broken_rules(*pieces, *nets)
    assert not broken, "; ".join(broken)
