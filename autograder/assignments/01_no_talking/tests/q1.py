from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2


@test_case(points=0, hidden=False, failure_message='rows_shape should be a shape (a torch.Size or a tuple) and identical_rows a list of row numbers between 0 and 4.')  # noqa: E501
def test_format(rows_shape, identical_rows):
    import torch

    from course.handles import number, student
    def numbers(value):
        if type(value) is torch.Tensor:
            value = value.tolist()
        assert type(value) in (list, tuple), "not a list or a tuple"
        return [number(n) for n in value]
    shape = numbers(student(rows_shape))
    assert len(shape) >= 1 and all(n == int(n) and n >= 0 for n in shape), "rows_shape is not a shape"
    rows = numbers(student(identical_rows))
    assert all(i == int(i) and 0 <= i < 5 for i in rows), "identical_rows is not a list of row numbers"


@test_case(points=1, hidden=True, failure_message='Not the right shape: x has one index of length 5 (five words), and every word becomes a row of 8 numbers.')  # noqa: E501
def test_rows_shape(rows_shape):
    from autograder.checks import answers
    from course.handles import student
    assert answers.numbers(student(rows_shape), "rows_shape") == [5, 8], "not (5, 8)"


@test_case(points=1, hidden=True, failure_message='Not the right rows. Row i of table[x] is the row of the table for the i-th word; which words of the sentence are the same?')  # noqa: E501
def test_identical_rows(identical_rows):
    from autograder.checks import answers
    from course.handles import student
    assert sorted(answers.numbers(student(identical_rows), "identical_rows")) == [0, 3], "not rows 0 and 3"
