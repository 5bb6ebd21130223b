from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1


@test_case(points=0, hidden=False, failure_message='NoResidual(32, 4) should turn a (64, 5, 32) batch into a (64, 5, 32) batch.')  # noqa: E501
def test_no_residual_shape(NoResidual):
    import torch

    from course.handles import student
    NoResidual = student(NoResidual)
    torch.manual_seed(0)
    out = NoResidual(32, 4)(torch.randn(64, 5, 32))
    assert tuple(out.shape) == (64, 5, 32), \
        f"NoResidual(32, 4) on a (64, 5, 32) batch should give (64, 5, 32), yours gives {tuple(out.shape)}"


@test_case(points=1, hidden=True, failure_message="NoResidual's forward should be your Block's two lines without the residuals: x = self.attention(self.norm1(x)), then x = self.mlp(self.norm2(x)), and return x.")  # noqa: E501
def test_no_residual_values(NoResidual):
    import torch

    from course.handles import close, student
    NoResidual = student(NoResidual)
    torch.manual_seed(8)
    for dim, heads, batch, L in [(12, 3, 2, 5), (8, 2, 1, 4)]:
        block = NoResidual(dim, heads)
        x = 2 * torch.randn(batch, L, dim) + 1
        got = block(x)
        want = block.mlp(block.norm2(block.attention(block.norm1(x))))   # its own pieces, one by one
        assert close(got, want, atol=1e-5, rtol=1e-4), \
            f"NoResidual({dim}, {heads}) does not compute mlp(norm2(attention(norm1(x))))"
