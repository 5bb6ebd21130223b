from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 1


@test_case(points=0, hidden=False, failure_message='head_params should be a whole number.')
def test_is_number(head_params):
    from course.handles import student
    value = student(head_params)
    assert type(value) is int or (type(value) is float and value == int(value)), \
        "head_params is not a whole number"


@test_case(points=1, hidden=True, failure_message='Not quite. Each of Q, K and V is a head_dim x dim matrix with no bias.')  # noqa: E501
def test_head_params(head_params):
    from course.handles import number, student
    assert number(student(head_params)) == 3 * 32 * 8
