from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 1


@test_case(points=0, hidden=False, failure_message='Store the parameter count of your plain-list version in list_params (a whole number).')  # noqa: E501
def test_list_params_is_number(list_params):
    from course.handles import student
    assert type(student(list_params)) is int, "list_params should be a whole number"


@test_case(points=1, hidden=True, failure_message='With a plain Python list PyTorch only finds the parameters of mix. Count them again.')  # noqa: E501
def test_list_params_value(list_params):
    from course.handles import number, student
    assert number(student(list_params)) == 1056, \
        "that is not what PyTorch counts when the heads sit in a plain Python list: which parameters " \
        "can it still find?"
