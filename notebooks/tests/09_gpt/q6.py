from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 2

@test_case(points=0, hidden=False, 
    failure_message="gpt_params and tying_saves should be numbers.")
def test_counts_are_numbers(gpt_params, tying_saves):
    from course.handles import student
    for value in (student(gpt_params), student(tying_saves)):
        assert type(value) in (int, float), 'gpt_params and tying_saves should be numbers'

