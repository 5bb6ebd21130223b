from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2

@test_case(points=0, hidden=False, 
    failure_message="PredictedNonsense(0.8) should return a number between 0 and 1.")
def test_is_fraction(PredictedNonsense):
    from course.handles import number, student
    PredictedNonsense = student(PredictedNonsense)
    assert 0 <= number(PredictedNonsense(0.8)) <= 1, 'PredictedNonsense(0.8) should be a fraction between 0 and 1'

