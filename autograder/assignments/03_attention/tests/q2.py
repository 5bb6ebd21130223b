from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2


@test_case(points=0, hidden=False, failure_message='rows_add_to_one and agrees_with_pytorch should each be True or False: what torch.allclose(...) says.')  # noqa: E501
def test_checks_are_true_or_false(rows_add_to_one, agrees_with_pytorch):
    import torch

    from course.handles import student
    for name, answer in [("rows_add_to_one", student(rows_add_to_one)),
                         ("agrees_with_pytorch", student(agrees_with_pytorch))]:
        ok = type(answer) is bool or (type(answer) is torch.Tensor and answer.numel() == 1
                                      and answer.dtype == torch.bool)
        assert ok, f"{name} should be True or False (what torch.allclose gives you), not {answer!r}"


@test_case(points=1, hidden=True, failure_message='rows_add_to_one does not say what your own Attention does on your q, k, v: set it to torch.allclose(weights.sum(dim=-1), torch.ones(5)), with weights from Attention(q, k, v).')  # noqa: E501
def test_rows_check(Attention, q, k, v, rows_add_to_one):
    import torch

    from autograder.checks import answers
    from course.handles import student
    Attention = student(Attention)
    q, k, v = student(q), student(k), student(v)
    answer = answers.truth(student(rows_add_to_one), "rows_add_to_one")
    # the truth, for your own Attention on your own q, k, v
    out, weights = Attention(q, k, v)
    truth = type(weights) is torch.Tensor and weights.dim() >= 1 \
        and torch.allclose(weights.sum(dim=-1), torch.ones(weights.shape[-1]))
    assert answer == bool(truth), f"rows_add_to_one is {answer}, but the rows of your weights " \
        f"{'do' if truth else 'do not'} add up to one"


@test_case(points=1, hidden=True, failure_message='agrees_with_pytorch does not say what your own Attention does on your q, k, v: set it to torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-6), with out from Attention(q, k, v).')  # noqa: E501
def test_pytorch_check(Attention, q, k, v, agrees_with_pytorch):
    import torch
    import torch.nn.functional as F

    from autograder.checks import answers
    from course.handles import student
    Attention = student(Attention)
    q, k, v = student(q), student(k), student(v)
    answer = answers.truth(student(agrees_with_pytorch), "agrees_with_pytorch")
    # the truth, for your own Attention on your own q, k, v
    out, weights = Attention(q, k, v)
    want = F.scaled_dot_product_attention(q, k, v)
    truth = type(out) is torch.Tensor and out.shape == want.shape and torch.allclose(out, want, atol=1e-6)
    assert answer == bool(truth), f"agrees_with_pytorch is {answer}, but your output " \
        f"{'agrees' if truth else 'does not agree'} with F.scaled_dot_product_attention"
