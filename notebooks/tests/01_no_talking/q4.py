from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 1

@test_case(points=0, hidden=False, 
    failure_message="batch_shape should be a shape (a torch.Size or a tuple).")
def test_batch_shape_format(batch_shape):
    import torch
    from course.handles import number, student
    shape = student(batch_shape)
    if type(shape) is torch.Tensor:
        shape = shape.tolist()
    assert type(shape) in (list, tuple) and len(shape) >= 1, 'batch_shape is not a shape'
    assert all((number(n) == int(number(n)) for n in shape)), 'batch_shape is not a shape'

