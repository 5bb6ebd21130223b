from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 2


@test_case(points=0, hidden=False, failure_message="Write your count as a whole number (or a formula that makes one) in multi_params, and PyTorch's count in multi_count.")  # noqa: E501
def test_multi_params_is_number(multi_params, multi_count):
    from course.handles import student
    assert type(student(multi_params)) is int, "multi_params should be a whole number (your count)"
    assert type(student(multi_count)) is int, \
        "multi_count should be a whole number: sum(p.numel() for p in multi.parameters())"


@test_case(points=1, hidden=True, failure_message='Not the right count: each of the 4 heads has three 8 x 32 matrices (no bias), and mix is a 32 x 32 matrix plus a bias of 32.')  # noqa: E501
def test_multi_params_value(multi_params):
    from course.handles import number, student
    assert number(student(multi_params)) == 4128, \
        "that is not the number of trainable numbers of MultiHead(32, 4): count the Q, K and V of each " \
        "head (no biases) and the matrix and bias of mix"


@test_case(points=1, hidden=True, failure_message='multi_count should be what PyTorch counts in your multi: sum(p.numel() for p in multi.parameters()).')  # noqa: E501
def test_multi_count(multi, multi_count):
    from course.handles import number, student
    multi = student(multi)
    own = sum(t.numel() for t in multi.params(values=False).values())
    got = number(student(multi_count))
    assert got == own, f"multi_count is {got}, but PyTorch finds {own} trainable numbers in your multi"
