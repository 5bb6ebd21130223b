from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1

@test_case(points=0, hidden=False, 
    failure_message="NoResidual(32, 4) should turn a (64, 5, 32) batch into a (64, 5, 32) batch.")
def test_no_residual_shape(NoResidual):
    import torch
    from course.handles import student
    NoResidual = student(NoResidual)
    torch.manual_seed(0)
    out = NoResidual(32, 4)(torch.randn(64, 5, 32))
    assert tuple(out.shape) == (64, 5, 32), f'NoResidual(32, 4) on a (64, 5, 32) batch should give (64, 5, 32), yours gives {tuple(out.shape)}'

