from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2


@test_case(
    points=1, hidden=False,
    failure_message=(
        'shuffle_agrees should say what torch.allclose(shuffled_out, out[perm], atol=1e-6) says for your own '
        'Attention on your q[perm], k[perm], v[perm] (perm from torch.randperm(5)), compared with your out.'))
def test_shuffle_agrees(Attention, q, k, v, perm, shuffle_agrees):
    import torch
    from course.handles import student
    Attention = student(Attention)
    q, k, v, perm = student(q), student(k), student(v), student(perm)
    answer = student(shuffle_agrees)
    if type(answer) is torch.Tensor and answer.numel() == 1 and answer.dtype == torch.bool:
        answer = bool(answer.item())
    assert type(answer) is bool, "shuffle_agrees should be True or False (what torch.allclose gives you)"
    assert type(perm) is torch.Tensor and sorted(perm.tolist()) == list(range(q.shape[0])), \
        "perm should be torch.randperm(5): every site once, in a new order"
    # the truth, for your own Attention on your own q, k, v and perm
    out, _ = Attention(q, k, v)
    shuffled_out, _ = Attention(q[perm], k[perm], v[perm])
    truth = type(out) is torch.Tensor and type(shuffled_out) is torch.Tensor \
        and shuffled_out.shape == out.shape and torch.allclose(shuffled_out, out[perm], atol=1e-6)
    assert answer == bool(truth), f"shuffle_agrees is {answer}, but for your Attention it is {bool(truth)}"


@test_case(
    points=1, hidden=True,
    failure_message=(
        'Shuffling the sites should shuffle both the output rows and the weights, for any sizes. Site perm[i]'
        ' is now site i, for the queries (the rows of the weights) and for the keys (their columns). Which of'
        ' the four expressions moves both? (This check is for an Attention whose weights change with q and k,'
        ' and whose output changes with v.)'))
def test_permutation(Attention, shuffled_weights_are):
    import torch
    from course.handles import student, close
    Attention = student(Attention)
    answer = student(shuffled_weights_are)
    assert type(answer) is str and answer.replace(" ", "") == "weights[perm][:,perm]", "wrong expression"
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
    does_work(Attention)                  # uniform or identity weights shuffle trivially: no answer
    torch.manual_seed(6)
    for L, d in [(7, 4), (4, 9)]:
        q, k, v = torch.randn(3, L, d)
        perm = torch.randperm(L)
        out, weights = Attention(q, k, v)
        out2, weights2 = Attention(q[perm], k[perm], v[perm])
        assert close(out2, out[perm]), "the shuffled output is not the output shuffled"
        assert close(weights2, weights[perm][:, perm]), "the shuffled weights are not the weights shuffled"
