from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2

@test_case(points=1, hidden=False, 
    failure_message="shuffle_agrees should be True, the result of torch.allclose(shuffled_out, out[perm], atol=1e-6).")
def test_shuffle_agrees(shuffle_agrees):
    import torch
    from course.handles import student
    agrees = student(shuffle_agrees)
    assert agrees is True or (type(agrees) is torch.Tensor and agrees.numel() == 1 and (bool(agrees.item()) is True))

