from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    failure_message="n_params should be a whole number and largest_piece a string such as 'embed'.")
def test_params_answers_types(n_params, largest_piece):
    from course.handles import student
    n, piece = (student(n_params), student(largest_piece))
    assert type(n) is int, 'n_params should be a whole number'
    assert type(piece) is str, "largest_piece should be a string, e.g. 'embed'"

