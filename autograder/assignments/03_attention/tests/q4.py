from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 1


@test_case(points=0, hidden=False, failure_message='hot_factor and cold_factor should be numbers, one of 1, 10 and 0.1.')  # noqa: E501
def test_factors_are_numbers(hot_factor, cold_factor):
    from course.handles import student
    for f in (student(hot_factor), student(cold_factor)):
        assert type(f) in (int, float) and min(abs(f - c) for c in (1, 10, 0.1)) < 1e-9


@test_case(points=1, hidden=True, failure_message='Not quite. Multiplying q by c multiplies every energy by c, i.e. divides the temperature by c. Large c means low temperature (cold, frozen onto one site); small c means high temperature (hot, nearly uniform).')  # noqa: E501
def test_hot_and_cold(hot_factor, cold_factor):
    from course.handles import number, student
    hot, cold = number(student(hot_factor)), number(student(cold_factor))
    assert abs(hot - 0.1) < 1e-9 and abs(cold - 10) < 1e-9
