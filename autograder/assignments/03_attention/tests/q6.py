from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 1


@test_case(points=0, hidden=False, failure_message='flat_heard and sharp_heard should each be a list of two numbers, like [1.0, 2.0].')  # noqa: E501
def test_heard_are_two_numbers(flat_heard, sharp_heard):
    from course.checking import numbers
    from course.handles import student
    for name, answer in [("flat_heard", student(flat_heard)), ("sharp_heard", student(sharp_heard))]:
        assert len(numbers(answer, name)) == 2, f"{name} should be a list of two numbers"


@test_case(points=1, hidden=True, failure_message="Not quite. With q_flat every weight is 1/3, so site 0 hears the average of the three values; with q_sharp (almost) all of its weight is on site 1, so it hears a copy of site 1's value.")  # noqa: E501
def test_heard_values(flat_heard, sharp_heard):
    from course.checking import numbers
    from course.handles import student
    flat, sharp = numbers(student(flat_heard), "flat_heard"), numbers(student(sharp_heard), "sharp_heard")
    for name, got, want in [("flat_heard", flat, [3, 5]), ("sharp_heard", sharp, [3, 4])]:
        assert len(got) == 2 and max(abs(a - b) for a, b in zip(got, want, strict=True)) < 0.01, \
            f"{name} is wrong"
