from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = 1

@test_case(points=0, hidden=False, 
    failure_message="unscaled_512 and scaled_512 should be numbers between 0 and 1: the largest weight of a row, on average.")
def test_read_off_are_numbers(unscaled_512, scaled_512):
    from course.handles import number, student
    for name, answer in [('unscaled_512', student(unscaled_512)), ('scaled_512', student(scaled_512))]:
        assert 0 <= number(answer) <= 1, f'{name} should be a number between 0 and 1'

