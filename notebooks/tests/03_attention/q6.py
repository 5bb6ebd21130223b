from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 1

@test_case(points=0, hidden=False, 
    failure_message="flat_heard and sharp_heard should each be a list of two numbers, like [1.0, 2.0].")
def test_heard_are_two_numbers(flat_heard, sharp_heard):
    from course.checking import numbers
    from course.handles import student
    for name, answer in [('flat_heard', student(flat_heard)), ('sharp_heard', student(sharp_heard))]:
        assert len(numbers(answer, name)) == 2, f'{name} should be a list of two numbers'

