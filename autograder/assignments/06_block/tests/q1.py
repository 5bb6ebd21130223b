from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2


@test_case(points=0.5, hidden=False, failure_message='norm(x) and NormalizeByHand(x) should agree (norm_matches = torch.allclose(norm(x), NormalizeByHand(x), atol=1e-4) is True), and NormalizeByHand should do what a fresh nn.LayerNorm does on other tensors too.')  # noqa: E501
def test_norm_matches(norm_matches, NormalizeByHand):
    import torch
    import torch.nn.functional as F

    from course.handles import close, student
    NormalizeByHand = student(NormalizeByHand)
    assert student(norm_matches) is True, \
        "norm_matches should be True: nn.LayerNorm(32) and your NormalizeByHand should agree on x"
    torch.manual_seed(5)
    x = 2 * torch.randn(3, 7, 10) + 1                  # the same comparison on a tensor of the check's own
    assert close(NormalizeByHand(x), F.layer_norm(x, (10,)), atol=1e-4, rtol=1e-4), \
        "on a tensor of shape (3, 7, 10), NormalizeByHand does not do what nn.LayerNorm(10) does"


@test_case(points=1.5, hidden=True, failure_message='NormalizeByHand should subtract the mean and divide by the standard deviation (unbiased=False) over the last index only, whatever the shape of x.')  # noqa: E501
def test_normalize_by_hand(NormalizeByHand):
    import torch

    from autograder.checks import reference
    from course.handles import close, student
    NormalizeByHand = student(NormalizeByHand)
    torch.manual_seed(4)
    for shape in [(3, 7, 10), (5, 16), (2, 2, 4, 6)]:
        x = 3 * torch.randn(*shape) + 2
        got = NormalizeByHand(x)
        assert tuple(got.shape) == shape, \
            f"NormalizeByHand should keep the shape {shape}, yours gives {tuple(got.shape)}"
        assert close(got, reference.layer_norm_by_hand(x), atol=1e-4, rtol=1e-4), \
            f"on a tensor of shape {shape}, NormalizeByHand is not (x - mean) / std over the last index: " \
            "is the mean and the std over dim=-1, with unbiased=False?"
