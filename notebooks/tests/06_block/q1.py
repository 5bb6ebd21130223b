from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=0.5, hidden=False, 
    failure_message="norm(x) and NormalizeByHand(x) should agree (norm_matches = torch.allclose(norm(x), NormalizeByHand(x), atol=1e-4) is True).")
def test_norm_matches(norm_matches):
    from course.handles import student
    assert student(norm_matches) is True, 'norm_matches should be True: nn.LayerNorm(32) and your NormalizeByHand should agree on x'

