from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 1


@test_case(points=0, hidden=False, failure_message='batch_shape should be a shape (a torch.Size or a tuple).')
def test_batch_shape_format(batch_shape):
    import torch

    from course.handles import number, student
    shape = student(batch_shape)
    if type(shape) is torch.Tensor:
        shape = shape.tolist()
    assert type(shape) in (list, tuple) and len(shape) >= 1, "batch_shape is not a shape"
    assert all(number(n) == int(number(n)) for n in shape), "batch_shape is not a shape"


@test_case(points=1, hidden=True, failure_message='Not the right shape. The batch has shape (64, 4): every one of its integers becomes a vector of 8 numbers.')  # noqa: E501
def test_batch_shape(batch_shape, embed):
    from autograder.checks import answers
    from course.handles import student
    shape = answers.numbers(student(batch_shape), "batch_shape")
    wanted = [[64, 4, 8]]
    try:                                         # or the shape for your own embed's vector size
        weight = student(embed).params(values=False).get("weight")
        wanted.append([64, 4, int(weight.shape[-1])])
    except Exception:
        pass
    assert shape in wanted, "not (64, 4, 8)"
