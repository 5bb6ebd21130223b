from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 8


@test_case(points=1, hidden=False, failure_message='SelfAttention(cfg) should have self.qkv = nn.Linear(dim, 3 * dim) and self.out = nn.Linear(dim, dim), and attn(x) should have the shape (B, T, D) of x. (This check uses one head.)')  # noqa: E501
def test_layers_and_shape(Config, SelfAttention):

    import torch

    from course.handles import student

    Config, SelfAttention = student(Config), student(SelfAttention)
    torch.manual_seed(0)
    cfg = Config(vocab_size=1024, context=128, dim=128, heads=1, layers=4, dropout=0.0)
    attn = SelfAttention(cfg)
    shapes = {name: tuple(t.shape) for name, t in attn.params(values=False).items()}
    assert attn.qkv.isa(torch.nn.Linear) and shapes.get("qkv.weight") == (384, 128), \
        "self.qkv should be nn.Linear(128, 384)"
    assert attn.out.isa(torch.nn.Linear) and shapes.get("out.weight") == (128, 128), \
        "self.out should be nn.Linear(128, 128)"
    out = attn(torch.randn(2, 16, 128))
    assert tuple(out.shape) == (2, 16, 128), f"attn(x) has shape {tuple(out.shape)}, expected (2, 16, 128)"


@test_case(points=1, hidden=True, failure_message='SelfAttention(cfg) should have exactly 4*D^2 + 4*D trainable numbers: self.qkv = nn.Linear(dim, 3*dim) and self.out = nn.Linear(dim, dim), both with biases, and nothing else (the mask is a buffer, not a parameter). Keep the number of heads as self.heads.')  # noqa: E501
def test_parameter_count(Config, SelfAttention):
    import math

    from course.handles import student

    Config, SelfAttention = student(Config), student(SelfAttention)
    for D, H, C in [(12, 3, 10), (16, 1, 20), (8, 2, 5)]:
        attn = SelfAttention(Config(vocab_size=7, context=C, dim=D, heads=H, layers=1, dropout=0.1))
        shapes = {name: tuple(t.shape) for name, t in attn.params(values=False).items()}
        assert shapes.get("qkv.weight") == (3 * D, D) and shapes.get("qkv.bias") == (3 * D,), \
            f"dim={D}: self.qkv should be nn.Linear({D}, {3 * D}) with a bias"
        assert shapes.get("out.weight") == (D, D) and shapes.get("out.bias") == (D,), \
            f"dim={D}: self.out should be nn.Linear({D}, {D}) with a bias"
        total = sum(math.prod(s) for s in shapes.values())
        assert total == 4 * D * D + 4 * D, \
            f"dim={D}: {total} trainable numbers, expected 4*D^2 + 4*D = {4 * D * D + 4 * D} " \
            f"({sorted(shapes)})"
        assert attn.heads.get() == H, f"self.heads should be the number of heads, {H}"


@test_case(points=0.5, hidden=True, failure_message="The mask should be a buffer of shape (context, context), made once in __init__ and kept with self.register_buffer('mask', ...): not a parameter (it is never trained), saved in state_dict(), and moved by .to(device) with the rest of the model.")  # noqa: E501
def test_mask_is_a_buffer(Config, SelfAttention):


    from course.handles import student

    Config, SelfAttention = student(Config), student(SelfAttention)
    D, C = 12, 10
    attn = SelfAttention(Config(vocab_size=7, context=C, dim=D, heads=1, layers=1, dropout=0.0))
    params = attn.params(values=False)
    assert not any(tuple(t.shape) == (C, C) for t in params.values()), \
        "the mask is a parameter: register it with self.register_buffer"
    square = [name for name, t in attn.buffers(values=False).items() if tuple(t.shape) == (C, C)]
    assert square, \
        "no buffer of shape (context, context): keep the mask with self.register_buffer(\"mask\", ...)"
    saved = attn.state_dict()
    assert square[0] in saved, "the mask buffer is not in state_dict(): don't make it persistent=False"
    attn.to("meta")
    moved = attn.buffers(values=False)
    assert moved[square[0]].device.type == "meta", \
        "the mask did not move with .to(): is it registered as a buffer?"


@test_case(points=1, hidden=True, failure_message='Dropout: in train() mode each number coming out of self.out is set to zero with probability cfg.dropout (and the others multiplied by 1/(1-p)), which nn.Dropout(cfg.dropout) does; in eval() mode nothing is dropped. Use nn.Dropout (or F.dropout with training=self.training) on the output of self.out. (This check first makes sure that your attention does the work, in eval() mode: the same output for the same input, and an output that changes with the input, with the queries and keys, with the values and with self.out, and at one site with the input at another.)')  # noqa: E501
def test_dropout(Config, SelfAttention):
    import torch

    from autograder.checks import chapter
    from course.handles import close, student
    Config, SelfAttention = student(Config), student(SelfAttention)
    torch.manual_seed(3)
    attn = SelfAttention(Config(vocab_size=7, context=12, dim=16, heads=1, layers=1, dropout=0.5))
    values = chapter.nontrivial(attn.params(values=False))
    attn.set_params(values)
    x = torch.randn(4, 10, 16)
    attn.eval()
    calm = chapter.attends(attn, values, x)
    assert close(attn(x), calm), "in eval() mode two calls on the same x differ: dropout should be off"
    chapter.dropout(attn, x, calm, "your attention")


@test_case(points=0.5, hidden=True, failure_message='Your SelfAttention should work on any device: with the model moved by .to(device) every tensor it uses must be there too. Keep the mask as a buffer (it moves with the model) and make nothing new on the CPU in forward. (This check uses one head, and first makes sure on the CPU that your attention does the work, as the dropout check does.)')  # noqa: E501
def test_device(Config, SelfAttention):
    import torch

    from autograder.checks import chapter, properties
    from course.handles import StudentError, student
    Config, SelfAttention = student(Config), student(SelfAttention)
    torch.manual_seed(5)
    cfg = Config(vocab_size=7, context=12, dim=16, heads=1, layers=1, dropout=0.0)
    probe = SelfAttention(cfg).eval()
    values = chapter.nontrivial(probe.params(values=False))
    probe.set_params(values)
    chapter.attends(probe, values, torch.randn(2, 9, 16))
    attn = SelfAttention(cfg)
    attn.to("meta")
    try:
        out = properties.on_another_device(attn, torch.zeros(2, 9, 16, device="meta"), mixing=(
            "your forward mixes devices: is the mask a buffer?"))
    except StudentError as error:
        raise AssertionError(f"with the model on another device your forward failed: {error}") from None
    assert type(out) is dict and out.get("shape") == [2, 9, 16] and out.get("device") == "meta", \
        "the output should be on the input's device"


@test_case(points=1, hidden=True, failure_message="With one head your attention's numbers are not softmax(q k^T / sqrt(d)) v followed by self.out, computed from the weights the check set. Check: q, k, v = self.qkv(x).split(D, dim=-1), in that order (queries, keys, values); the softmax over the last index (each row sums to 1); self.out at the end; B, T, D taken from x.shape and the mask cut as self.mask[:T, :T], for any T from 1 to the context. (A mask that points the wrong way costs points in the causality check, not here: this check finds out which sites your attention lets each site hear and uses that.)")  # noqa: E501
def test_one_head(Config, SelfAttention):
    import torch

    from autograder.checks import chapter
    from course.handles import student
    Config, SelfAttention = student(Config), student(SelfAttention)
    torch.manual_seed(11)
    for B, T, D, C in [(2, 7, 12, 9), (3, 1, 8, 5), (1, 6, 16, 6), (4, 5, 10, 12)]:
        assert chapter.as_written(Config, SelfAttention, B, T, D, 1, C), \
            f"one head, x of shape {(B, T, D)} (context {C}): your attention differs from " \
            "softmax(q k^T / sqrt(d)) v"


@test_case(points=1, hidden=True, failure_message="The heads get mixed up (or your attention does not do the work, as the dropout check says): with self.out set to the identity, the part of the output that belongs to head h (columns h*d to (h+1)*d) must change when head h's rows of self.qkv change, and nothing else may. Cut q, k and v into heads with view(B, T, H, d).transpose(1, 2) (not view(B, H, T, d)), and join them with transpose(1, 2) and then .contiguous().view(B, T, D) (or .reshape). RuntimeError: view size is not compatible: you forgot .contiguous() before the last view.")  # noqa: E501
def test_heads_kept_apart(Config, SelfAttention):
    import torch

    from autograder.checks import chapter
    from course.handles import close, student
    Config, SelfAttention = student(Config), student(SelfAttention)
    torch.manual_seed(12)
    for B, T, D, H, C in [(2, 6, 12, 3, 8), (1, 5, 16, 4, 5), (3, 4, 10, 2, 6)]:
        cfg = Config(vocab_size=5, context=C, dim=D, heads=H, layers=1, dropout=0.0)
        attn = SelfAttention(cfg).double().eval()
        values = chapter.nontrivial(attn.params(values=False))
        values["out.weight"] = torch.eye(D, dtype=torch.float64)          # out(y) = y: the heads side by side
        values["out.bias"] = torch.zeros(D, dtype=torch.float64)
        attn.set_params(values)
        x = torch.randn(B, T, D, dtype=torch.float64)
        base = chapter.attends(attn, values, x)
        d = D // H
        for h in range(H):
            W = values["qkv.weight"].clone()
            rows = torch.cat([torch.arange(s * D + h * d, s * D + (h + 1) * d) for s in range(3)])
            W[rows] = torch.randn(len(rows), D, dtype=torch.float64)   # head h's queries, keys, values anew
            attn.set_params({"qkv.weight": W})
            moved = attn(x)
            attn.set_params({"qkv.weight": values["qkv.weight"]})
            own = torch.zeros(D, dtype=torch.bool)
            own[h * d:(h + 1) * d] = True
            assert chapter.differs(moved[..., own], base[..., own]), \
                f"heads={H}: new rows for head {h} in qkv did not change its part of the output " \
                f"(columns {h * d} to {(h + 1) * d - 1})"
            assert close(moved[..., ~own], base[..., ~own], atol=1e-9, rtol=0), \
                f"heads={H}: new rows for head {h} in qkv changed the part of the output that belongs to " \
                "other heads"


@test_case(points=1, hidden=True, failure_message="With several heads your attention's numbers are not softmax(q k^T / sqrt(d)) v of every head, joined and through self.out, computed from the weights the check set. If the one-head check and the heads check passed, it is the scale: divide by sqrt(d) with d = dim // heads, the width of ONE head, not sqrt(dim). Otherwise fix what those two say first. (The mask is found out and used as in the one-head check.)")  # noqa: E501
def test_several_heads(Config, SelfAttention):
    import torch

    from autograder.checks import chapter
    from course.handles import student
    Config, SelfAttention = student(Config), student(SelfAttention)
    torch.manual_seed(13)
    for B, T, D, H, C in [(2, 7, 12, 3, 9), (3, 5, 16, 4, 5), (1, 6, 30, 5, 8), (2, 4, 8, 8, 10),
                          (1, 1, 12, 2, 6), (4, 8, 12, 3, 8)]:
        assert chapter.as_written(Config, SelfAttention, B, T, D, H, C), \
            f"B={B}, T={T}, dim={D}, heads={H}: your attention differs from softmax(q k^T / sqrt(d)) v " \
            "per head"


@test_case(points=1, hidden=True, failure_message='Causality: the output of your attention at site i must not depend at all (zero derivative) on the input at sites j > i, must depend on every site j <= i (itself included), and never on the other sentences of the batch. The mask is torch.tril of ones (the diagonal allowed), cut as self.mask[:T, :T] and applied with masked_fill(~mask, -inf) to the dot products before the softmax; torch.triu would be wrong. (This check uses one head, and first makes sure that your attention does the work, as the dropout check does.)')  # noqa: E501
def test_causal(Config, SelfAttention):
    import torch

    from autograder.checks import chapter
    from course.handles import close, student
    Config, SelfAttention = student(Config), student(SelfAttention)
    torch.manual_seed(14)
    B, T, D = 3, 7, 10
    cfg = Config(vocab_size=5, context=9, dim=D, heads=1, layers=1, dropout=0.0)
    attn = SelfAttention(cfg).double().eval()
    values = chapter.nontrivial(attn.params(values=False))
    attn.set_params(values)
    x = torch.randn(B, T, D, dtype=torch.float64)
    whole = chapter.attends(attn, values, x)
    for i in range(T):                              # the derivatives of the output at site i
        r = torch.zeros(B, T, D, dtype=torch.float64)
        r[:, i] = torch.randn(B, D, dtype=torch.float64)
        out, grads, _ = attn.vjp(x, cotangent=r)
        g = grads[0] if type(grads) is list and grads else None
        assert type(g) is torch.Tensor and tuple(g.shape) == (B, T, D), \
            "no gradient reached the input: is the output computed from x?"
        assert not torch.isnan(g).any(), "NaN in the gradients: does every site still hear itself?"
        if i + 1 < T:
            assert g[:, i + 1:].abs().max().item() == 0, \
                f"the output at site {i} has a nonzero derivative with respect to the input at sites " \
                f"after {i}"
        assert bool((g[:, :i + 1].abs().amax(dim=(0, 2)) > 0).all()), \
            f"the output at site {i} does not depend on every site j <= {i}: the mask hides too much"
    assert close(attn(x[1:2]), whole[1:2], atol=1e-9, rtol=0), \
        "a sentence's output depends on the other sentences in its batch"
