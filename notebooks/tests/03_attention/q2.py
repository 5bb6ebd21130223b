from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    failure_message="rows_add_to_one and agrees_with_pytorch should each be True or False: what torch.allclose(...) says.")
def test_checks_are_true_or_false(rows_add_to_one, agrees_with_pytorch):
    import torch
    from course.handles import student
    for name, answer in [('rows_add_to_one', student(rows_add_to_one)), ('agrees_with_pytorch', student(agrees_with_pytorch))]:
        ok = type(answer) is bool or (type(answer) is torch.Tensor and answer.numel() == 1 and (answer.dtype == torch.bool))
        assert ok, f'{name} should be True or False (what torch.allclose gives you), not {answer!r}'

