from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2

@test_case(points=0, hidden=False, 
    failure_message="predicted_nonsense should be a number between 0 and 1.")
def test_is_fraction(predicted_nonsense):
    from course.handles import number, student
    assert 0 <= number(student(predicted_nonsense)) <= 1

