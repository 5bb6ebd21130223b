from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=0.5, hidden=False, 
    failure_message="norm(x) and NormalizeByHand(x) should agree (norm_matches = torch.allclose(norm(x), NormalizeByHand(x), atol=1e-4) is True), and NormalizeByHand should do what a fresh nn.LayerNorm does on other tensors too.")
def test_norm_matches(norm_matches, NormalizeByHand):
    import torch
    import torch.nn.functional as F
    from course.handles import close, student
    NormalizeByHand = student(NormalizeByHand)
    assert student(norm_matches) is True, 'norm_matches should be True: nn.LayerNorm(32) and your NormalizeByHand should agree on x'
    torch.manual_seed(5)
    x = 2 * torch.randn(3, 7, 10) + 1
    assert close(NormalizeByHand(x), F.layer_norm(x, (10,)), atol=0.0001, rtol=0.0001), 'on a tensor of shape (3, 7, 10), NormalizeByHand does not do what nn.LayerNorm(10) does'

