from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 8


@test_case(points=1, hidden=False, failure_message='For q, k, v of shape (5, 8) Attention must return out of shape (5, 8) and weights of shape (5, 5) whose rows add up to one.')  # noqa: E501
def test_one_sentence(Attention):
    import torch

    from course.handles import close, student
    Attention = student(Attention)
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 8)
    out, weights = Attention(q, k, v)
    assert tuple(out.shape) == (5, 8), f"out has shape {tuple(out.shape)}, expected (5, 8)"
    assert tuple(weights.shape) == (5, 5), f"weights has shape {tuple(weights.shape)}, expected (5, 5)"
    assert close(weights.sum(dim=-1), torch.ones(5)), "the rows of the weights do not add up to one"


@test_case(points=1, hidden=True, failure_message='For random sizes, every row of your weights should be a probability distribution (no negative entries, adding up to one), made from the queries and the keys. Is the softmax over the last index (j)? Do your weights change with q and k, and your output with v?')  # noqa: E501
def test_rows_are_probabilities(Attention):
    import torch

    from autograder.checks import properties, work
    from course.handles import student
    Attention = student(Attention)
    work.attention_works(Attention)      # uniform or fixed weights are probabilities too, but no answer
    torch.manual_seed(1)
    for L, d, dv in [(7, 3, 5), (2, 16, 4), (11, 6, 6)]:
        q, k = 2 * torch.randn(2, L, d)
        v = torch.randn(L, dv)
        out, weights = Attention(q, k, v)
        properties.rows_are_probabilities(weights, L)


@test_case(points=3, hidden=True, failure_message='For one sentence of random size your output or weights differ from softmax(q k^T / sqrt(d)) and F.scaled_dot_product_attention. Check the scale (d is the length of the query vectors, q.shape[-1]), the sign of the energy, and that the output is weights @ v.')  # noqa: E501
def test_values_one_sentence(Attention):
    import math

    import torch
    import torch.nn.functional as F

    from autograder.checks import Hint, reference
    from course.handles import close, student
    Attention = student(Attention)
    torch.manual_seed(2)
    for L, d, dv in [(6, 4, 4), (3, 9, 9), (9, 16, 5)]:
        q, k = 1.5 * torch.randn(2, L, d)
        v = torch.randn(L, dv)
        w_ref = reference.attention_weights(q, k)
        out, weights = Attention(q, k, v)
        if not close(weights, w_ref):
            scales = {"1 (no scale)": 1.0, "sqrt(L)": math.sqrt(L), "d": d}
            scale = reference.scale_used(weights, q, k, scales)
            if scale:
                raise Hint(f"your weights are softmax(q k^T / {scale}): divide by sqrt(d), the length of the "
                           "query vectors (q.shape[-1])")
            raise AssertionError("weights differ")
        assert close(out, w_ref @ v), "out differs"
        assert close(out, F.scaled_dot_product_attention(q, k, v)), "differs from pytorch"


@test_case(points=1, hidden=True, failure_message='Your Attention does not work on a batch. For q, k, v of shape (batch, L, d) it should return out (batch, L, d) and weights (batch, L, L), each sentence exactly as if it came alone. Use -2 and -1 for the indices (k.transpose(-2, -1), softmax over dim=-1), not .T or 0 and 1. (This check is for an Attention whose weights change with q and k, and whose output changes with v.)')  # noqa: E501
def test_batched(Attention):
    import torch

    from autograder.checks import properties, work
    from course.handles import student
    Attention = student(Attention)
    work.attention_works(Attention)      # a constant answer is the same for every sentence, but no answer
    torch.manual_seed(3)
    for shape, dv in [((4, 5, 8), 8), ((3, 7, 4), 6), ((2, 3, 6, 5), 5)]:
        q, k = torch.randn(2, *shape)
        v = torch.randn(*shape[:-1], dv)
        out, weights = Attention(q, k, v)
        L = shape[-2]
        assert tuple(out.shape) == (*shape[:-1], dv), f"output of shape {tuple(out.shape)}"
        assert tuple(weights.shape) == (*shape[:-1], L), f"weights of shape {tuple(weights.shape)}"
        # the first and the last sentence of the batch, each against your Attention on it alone
        first, last = (0,) * (len(shape) - 2), tuple(s - 1 for s in shape[:-2])
        properties.batch_is_alone(Attention, (q, k, v), (out, weights), [first, last])


@test_case(points=1, hidden=True, failure_message="Gradients do not flow through your Attention as they should. Don't detach anything (and don't use torch.no_grad or .item()) inside Attention, or Q, K and V can never be trained; and the weights must come from the queries and keys, the output from the values.")  # noqa: E501
def test_gradients(Attention):
    import torch

    from autograder.checks import properties, work
    from course.handles import student
    Attention = student(Attention)
    work.attention_works(Attention)
    torch.manual_seed(4)
    q, k, v = torch.randn(3, 6, 5, dtype=torch.float64)
    r = torch.randn(6, 5, dtype=torch.float64)
    _, grads, _ = Attention.vjp(q, k, v, cotangent=(r, None))
    assert type(grads) in (list, tuple) and len(grads) == 3, "no gradients"
    assert all(type(g) is torch.Tensor and g.shape == (6, 5) for g in grads), "no gradient reached q, k or v"
    # the queries and keys must matter: an Attention that ignores them can never learn whom to listen to
    assert grads[0].abs().max() > 1e-6 and grads[1].abs().max() > 1e-6 and grads[2].abs().max() > 1e-6, \
        "q, k or v gets no gradient: do your weights depend on the queries and keys," \
        " your output on the values?"
    # the gradient of your own Attention, against its slope measured by finite differences
    for i in range(3):
        for _ in range(2):
            u = torch.randn(6, 5, dtype=torch.float64)

            def output_at(h, i=i, u=u):          # your output, h along u in argument i
                args = [q, k, v]
                args[i] = args[i] + h * u
                return Attention(*args)[0]
            properties.slope_agrees(float((grads[i] * u).sum()), output_at, r, 1e-4,
                                    "the gradient does not match how the output changes")


@test_case(points=1, hidden=True, failure_message='Your Attention either does not work yet (its weights must change with q and k, its output with v), or uses one of the pieces the rules forbid (F.scaled_dot_product_attention, nn.MultiheadAttention or nn.Transformer...). Build it from @, transpose and softmax.')  # noqa: E501
def test_rules(Attention):
    import torch

    from autograder.checks import work
    from course.handles import broken_rules, student
    Attention = student(Attention)
    work.attention_works(Attention)      # the rules point is for an Attention that works
    torch.manual_seed(5)
    q, k, v = torch.randn(3, 5, 8)
    out, weights = Attention(q, k, v)
    assert tuple(out.shape) == (5, 8), "Attention does not run on one sentence yet"
    broken = broken_rules(Attention)
    assert not broken, "; ".join(broken)
