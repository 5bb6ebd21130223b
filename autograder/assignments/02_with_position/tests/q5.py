from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2


@test_case(points=0, hidden=False, failure_message='PredictedNonsense(0.8) should return a number between 0 and 1.')  # noqa: E501
def test_is_fraction(PredictedNonsense):
    from course.handles import number, student
    PredictedNonsense = student(PredictedNonsense)
    assert 0 <= number(PredictedNonsense(0.8)) <= 1, \
        "PredictedNonsense(0.8) should be a fraction between 0 and 1"


@test_case(points=2, hidden=True, failure_message="Not quite. A sentence is nonsense when exactly one of the two choices goes the 'cat ... alive' way: cat and empty, or box and alive. Add the probabilities of those two cases, as a function of p.")  # noqa: E501
def test_predicted(PredictedNonsense):
    from course.handles import number, student
    PredictedNonsense = student(PredictedNonsense)
    for p in (0.8, 0.5, 0.3, 0.95, 0.0, 1.0):
        got = number(PredictedNonsense(p))
        assert abs(got - 2 * p * (1 - p)) < 1e-6, f"PredictedNonsense({p}) gave {got}"
