from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 8


@test_case(
    points=1, hidden=False,
    failure_message=(
        'For q, k, v of shape (5, 8) Attention must return out of shape (5, 8) and weights of shape (5, 5) '
        'whose rows add up to one.'))
def test_one_sentence(Attention):
    import torch
    from course.handles import student, close
    Attention = student(Attention)
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 8)
    out, weights = Attention(q, k, v)
    assert tuple(out.shape) == (5, 8), f"out has shape {tuple(out.shape)}, expected (5, 8)"
    assert tuple(weights.shape) == (5, 5), f"weights has shape {tuple(weights.shape)}, expected (5, 5)"
    assert close(weights.sum(dim=-1), torch.ones(5)), "the rows of the weights do not add up to one"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'For random sizes, every row of your weights should be a probability distribution (no negative '
        'entries, adding up to one), made from the queries and the keys. Is the softmax over the last index '
        '(j)? Do your weights change with q and k, and your output with v?'))
def test_rows_are_probabilities(Attention):
    import torch
    from course.handles import student, close
    Attention = student(Attention)
    def does_work(Attention):
        """Weights from the queries and the keys, an output from the values: each changes with them."""
        torch.manual_seed(11)
        q, k, v = torch.randn(3, 6, 4)
        answers = [Attention(q, k, v), Attention(q, k, v), Attention(q + torch.randn(6, 4), k, v),
                   Attention(q, k + torch.randn(6, 4), v), Attention(q, k, v + torch.randn(6, 4))]
        for answer in answers:
            assert type(answer) in (tuple, list) and len(answer) == 2, "Attention does not return (out, weights)"
            assert all(type(t) is torch.Tensor for t in answer), "Attention does not return two tensors"
        (out, weights), (out2, weights2), (_, new_q), (_, new_k), (new_v, _) = answers
        def same(a, b):
            return a.shape == b.shape and torch.allclose(a, b, atol=1e-4)
        assert same(out2, out) and same(weights2, weights), "Attention gives different answers for the same q, k, v"
        assert not same(new_q, weights), "the weights do not change when the queries change"
        assert not same(new_k, weights), "the weights do not change when the keys change"
        assert not same(new_v, out), "the output does not change when the values change"
        # attention mixes the sites: the query or key, and the value, of one site reach the output of others
        j = 2
        others = [i for i in range(6) if i != j]
        q_j, k_j, v_j = q.clone(), k.clone(), v.clone()
        q_j[j] += 2 * torch.randn(4)
        k_j[j] += 2 * torch.randn(4)
        v_j[j] += 2 * torch.randn(4)
        mixed = [Attention(q_j, k, v), Attention(q, k_j, v), Attention(q, k, v_j)]
        for answer in mixed:
            assert type(answer) in (tuple, list) and len(answer) == 2, "Attention does not return (out, weights)"
            assert all(type(t) is torch.Tensor for t in answer), "Attention does not return two tensors"
        (out_q, _), (out_k, _), (out_v, _) = mixed
        assert out.shape == out_q.shape == out_k.shape == out_v.shape == (6, 4), "Attention does not return an output of the shape of v"
        assert not (same(out_q[others], out[others]) and same(out_k[others], out[others])), \
            "changing the query or the key of one site changes the output of no other site: do your sites listen to each other?"
        assert not same(out_v[others], out[others]), \
            "changing the value of one site changes the output of no other site: do your sites listen to each other?"
        assert weights.shape == (6, 6), "the weights are not of shape (L, L)"
        off_diagonal = weights.sum() - torch.diagonal(weights).sum()
        assert off_diagonal > 0.5, "the weights put (almost) nothing on the other sites: every site listens only to itself"
    does_work(Attention)                  # uniform or fixed weights are probabilities too, but no answer
    torch.manual_seed(1)
    for L, d, dv in [(7, 3, 5), (2, 16, 4), (11, 6, 6)]:
        q, k = 2 * torch.randn(2, L, d)
        v = torch.randn(L, dv)
        out, weights = Attention(q, k, v)
        assert tuple(weights.shape) == (L, L), f"weights of shape {tuple(weights.shape)} for L = {L}"
        assert (weights >= 0).all(), "negative weights"
        assert close(weights.sum(dim=-1), torch.ones(L)), "rows that do not add up to one"


@test_case(
    points=3, hidden=True,
    failure_message=(
        'For one sentence of random size your output or weights differ from softmax(q k^T / sqrt(d)) and '
        'F.scaled_dot_product_attention. Check the scale (d is the length of the query vectors, q.shape[-1]),'
        ' the sign of the energy, and that the output is weights @ v.'))
def test_values_one_sentence(Attention):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Attention = student(Attention)
    torch.manual_seed(2)
    for L, d, dv in [(6, 4, 4), (3, 9, 9), (9, 16, 5)]:
        q, k = 1.5 * torch.randn(2, L, d)
        v = torch.randn(L, dv)
        w_ref = torch.softmax(q @ k.T / math.sqrt(d), dim=-1)
        out, weights = Attention(q, k, v)
        assert close(weights, w_ref), "weights differ"
        assert close(out, w_ref @ v), "out differs"
        assert close(out, F.scaled_dot_product_attention(q, k, v)), "differs from pytorch"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'Your Attention does not work on a batch. For q, k, v of shape (batch, L, d) it should return out '
        '(batch, L, d) and weights (batch, L, L), each sentence exactly as if it came alone. Use -2 and -1 '
        'for the indices (k.transpose(-2, -1), softmax over dim=-1), not .T or 0 and 1. (This check is for an'
        ' Attention whose weights change with q and k, and whose output changes with v.)'))
def test_batched(Attention):
    import torch
    from course.handles import student, close
    Attention = student(Attention)
    def does_work(Attention):
        """Weights from the queries and the keys, an output from the values: each changes with them."""
        torch.manual_seed(11)
        q, k, v = torch.randn(3, 6, 4)
        answers = [Attention(q, k, v), Attention(q, k, v), Attention(q + torch.randn(6, 4), k, v),
                   Attention(q, k + torch.randn(6, 4), v), Attention(q, k, v + torch.randn(6, 4))]
        for answer in answers:
            assert type(answer) in (tuple, list) and len(answer) == 2, "Attention does not return (out, weights)"
            assert all(type(t) is torch.Tensor for t in answer), "Attention does not return two tensors"
        (out, weights), (out2, weights2), (_, new_q), (_, new_k), (new_v, _) = answers
        def same(a, b):
            return a.shape == b.shape and torch.allclose(a, b, atol=1e-4)
        assert same(out2, out) and same(weights2, weights), "Attention gives different answers for the same q, k, v"
        assert not same(new_q, weights), "the weights do not change when the queries change"
        assert not same(new_k, weights), "the weights do not change when the keys change"
        assert not same(new_v, out), "the output does not change when the values change"
        # attention mixes the sites: the query or key, and the value, of one site reach the output of others
        j = 2
        others = [i for i in range(6) if i != j]
        q_j, k_j, v_j = q.clone(), k.clone(), v.clone()
        q_j[j] += 2 * torch.randn(4)
        k_j[j] += 2 * torch.randn(4)
        v_j[j] += 2 * torch.randn(4)
        mixed = [Attention(q_j, k, v), Attention(q, k_j, v), Attention(q, k, v_j)]
        for answer in mixed:
            assert type(answer) in (tuple, list) and len(answer) == 2, "Attention does not return (out, weights)"
            assert all(type(t) is torch.Tensor for t in answer), "Attention does not return two tensors"
        (out_q, _), (out_k, _), (out_v, _) = mixed
        assert out.shape == out_q.shape == out_k.shape == out_v.shape == (6, 4), "Attention does not return an output of the shape of v"
        assert not (same(out_q[others], out[others]) and same(out_k[others], out[others])), \
            "changing the query or the key of one site changes the output of no other site: do your sites listen to each other?"
        assert not same(out_v[others], out[others]), \
            "changing the value of one site changes the output of no other site: do your sites listen to each other?"
        assert weights.shape == (6, 6), "the weights are not of shape (L, L)"
        off_diagonal = weights.sum() - torch.diagonal(weights).sum()
        assert off_diagonal > 0.5, "the weights put (almost) nothing on the other sites: every site listens only to itself"
    does_work(Attention)                  # a constant answer is the same for every sentence, but no answer
    torch.manual_seed(3)
    for shape, dv in [((4, 5, 8), 8), ((3, 7, 4), 6), ((2, 3, 6, 5), 5)]:
        q, k = torch.randn(2, *shape)
        v = torch.randn(*shape[:-1], dv)
        out, weights = Attention(q, k, v)
        L = shape[-2]
        assert tuple(out.shape) == (*shape[:-1], dv), f"output of shape {tuple(out.shape)}"
        assert tuple(weights.shape) == (*shape[:-1], L), f"weights of shape {tuple(weights.shape)}"
        # each sentence of the batch, compared with your own Attention on that sentence alone
        for index in [(0,) * (len(shape) - 2), tuple(s - 1 for s in shape[:-2])]:
            one_out, one_weights = Attention(q[index], k[index], v[index])
            assert close(out[index], one_out, atol=1e-5), "a sentence of the batch differs from the same sentence alone"
            assert close(weights[index], one_weights, atol=1e-5), "weights in the batch differ from the sentence alone"


@test_case(
    points=1, hidden=True,
    failure_message=(
        "Gradients do not flow through your Attention as they should. Don't detach anything (and don't use "
        'torch.no_grad or .item()) inside Attention, or Q, K and V can never be trained; and the weights must'
        ' come from the queries and keys, the output from the values.'))
def test_gradients(Attention):
    import torch
    from course.handles import student
    Attention = student(Attention)
    def does_work(Attention):
        """Weights from the queries and the keys, an output from the values: each changes with them."""
        torch.manual_seed(11)
        q, k, v = torch.randn(3, 6, 4)
        answers = [Attention(q, k, v), Attention(q, k, v), Attention(q + torch.randn(6, 4), k, v),
                   Attention(q, k + torch.randn(6, 4), v), Attention(q, k, v + torch.randn(6, 4))]
        for answer in answers:
            assert type(answer) in (tuple, list) and len(answer) == 2, "Attention does not return (out, weights)"
            assert all(type(t) is torch.Tensor for t in answer), "Attention does not return two tensors"
        (out, weights), (out2, weights2), (_, new_q), (_, new_k), (new_v, _) = answers
        def same(a, b):
            return a.shape == b.shape and torch.allclose(a, b, atol=1e-4)
        assert same(out2, out) and same(weights2, weights), "Attention gives different answers for the same q, k, v"
        assert not same(new_q, weights), "the weights do not change when the queries change"
        assert not same(new_k, weights), "the weights do not change when the keys change"
        assert not same(new_v, out), "the output does not change when the values change"
        # attention mixes the sites: the query or key, and the value, of one site reach the output of others
        j = 2
        others = [i for i in range(6) if i != j]
        q_j, k_j, v_j = q.clone(), k.clone(), v.clone()
        q_j[j] += 2 * torch.randn(4)
        k_j[j] += 2 * torch.randn(4)
        v_j[j] += 2 * torch.randn(4)
        mixed = [Attention(q_j, k, v), Attention(q, k_j, v), Attention(q, k, v_j)]
        for answer in mixed:
            assert type(answer) in (tuple, list) and len(answer) == 2, "Attention does not return (out, weights)"
            assert all(type(t) is torch.Tensor for t in answer), "Attention does not return two tensors"
        (out_q, _), (out_k, _), (out_v, _) = mixed
        assert out.shape == out_q.shape == out_k.shape == out_v.shape == (6, 4), "Attention does not return an output of the shape of v"
        assert not (same(out_q[others], out[others]) and same(out_k[others], out[others])), \
            "changing the query or the key of one site changes the output of no other site: do your sites listen to each other?"
        assert not same(out_v[others], out[others]), \
            "changing the value of one site changes the output of no other site: do your sites listen to each other?"
        assert weights.shape == (6, 6), "the weights are not of shape (L, L)"
        off_diagonal = weights.sum() - torch.diagonal(weights).sum()
        assert off_diagonal > 0.5, "the weights put (almost) nothing on the other sites: every site listens only to itself"
    does_work(Attention)
    torch.manual_seed(4)
    q, k, v = torch.randn(3, 6, 5, dtype=torch.float64)
    r = torch.randn(6, 5, dtype=torch.float64)
    _, grads, _ = Attention.vjp(q, k, v, cotangent=(r, None))
    assert type(grads) in (list, tuple) and len(grads) == 3, "no gradients"
    assert all(type(g) is torch.Tensor and g.shape == (6, 5) for g in grads), "no gradient reached q, k or v"
    # the queries and keys must matter: an Attention that ignores them can never learn whom to listen to
    assert grads[0].abs().max() > 1e-6 and grads[1].abs().max() > 1e-6 and grads[2].abs().max() > 1e-6, \
        "q, k or v gets no gradient: do your weights depend on the queries and keys, your output on the values?"
    # the gradient of your own Attention, compared with its slope measured by finite differences
    eps = 1e-4
    for i in range(3):
        for _ in range(2):
            u = torch.randn(6, 5, dtype=torch.float64)
            args = [q, k, v]
            plus = list(args); plus[i] = args[i] + eps * u
            minus = list(args); minus[i] = args[i] - eps * u
            slope = ((Attention(*plus)[0] - Attention(*minus)[0]) * r).sum() / (2 * eps)
            assert abs(float((grads[i] * u).sum()) - float(slope)) < 1e-5 * (1 + abs(float(slope))), \
                "the gradient does not match how the output changes"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'Your Attention either does not work yet (its weights must change with q and k, its output with v), '
        'or uses one of the pieces the rules forbid (F.scaled_dot_product_attention, nn.MultiheadAttention or'
        ' nn.Transformer...). Build it from @, transpose and softmax.'))
def test_rules(Attention):
    import torch
    from course.handles import student, broken_rules
    Attention = student(Attention)
    def does_work(Attention):
        """Weights from the queries and the keys, an output from the values: each changes with them."""
        torch.manual_seed(11)
        q, k, v = torch.randn(3, 6, 4)
        answers = [Attention(q, k, v), Attention(q, k, v), Attention(q + torch.randn(6, 4), k, v),
                   Attention(q, k + torch.randn(6, 4), v), Attention(q, k, v + torch.randn(6, 4))]
        for answer in answers:
            assert type(answer) in (tuple, list) and len(answer) == 2, "Attention does not return (out, weights)"
            assert all(type(t) is torch.Tensor for t in answer), "Attention does not return two tensors"
        (out, weights), (out2, weights2), (_, new_q), (_, new_k), (new_v, _) = answers
        def same(a, b):
            return a.shape == b.shape and torch.allclose(a, b, atol=1e-4)
        assert same(out2, out) and same(weights2, weights), "Attention gives different answers for the same q, k, v"
        assert not same(new_q, weights), "the weights do not change when the queries change"
        assert not same(new_k, weights), "the weights do not change when the keys change"
        assert not same(new_v, out), "the output does not change when the values change"
        # attention mixes the sites: the query or key, and the value, of one site reach the output of others
        j = 2
        others = [i for i in range(6) if i != j]
        q_j, k_j, v_j = q.clone(), k.clone(), v.clone()
        q_j[j] += 2 * torch.randn(4)
        k_j[j] += 2 * torch.randn(4)
        v_j[j] += 2 * torch.randn(4)
        mixed = [Attention(q_j, k, v), Attention(q, k_j, v), Attention(q, k, v_j)]
        for answer in mixed:
            assert type(answer) in (tuple, list) and len(answer) == 2, "Attention does not return (out, weights)"
            assert all(type(t) is torch.Tensor for t in answer), "Attention does not return two tensors"
        (out_q, _), (out_k, _), (out_v, _) = mixed
        assert out.shape == out_q.shape == out_k.shape == out_v.shape == (6, 4), "Attention does not return an output of the shape of v"
        assert not (same(out_q[others], out[others]) and same(out_k[others], out[others])), \
            "changing the query or the key of one site changes the output of no other site: do your sites listen to each other?"
        assert not same(out_v[others], out[others]), \
            "changing the value of one site changes the output of no other site: do your sites listen to each other?"
        assert weights.shape == (6, 6), "the weights are not of shape (L, L)"
        off_diagonal = weights.sum() - torch.diagonal(weights).sum()
        assert off_diagonal > 0.5, "the weights put (almost) nothing on the other sites: every site listens only to itself"
    does_work(Attention)                  # the rules point is for an Attention that works
    torch.manual_seed(5)
    q, k, v = torch.randn(3, 5, 8)
    out, weights = Attention(q, k, v)
    assert tuple(out.shape) == (5, 8), "Attention does not run on one sentence yet"
    broken = broken_rules(Attention)
    assert not broken, "; ".join(broken)
