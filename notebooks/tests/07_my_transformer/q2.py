from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2

@test_case(points=0, hidden=False, 
    failure_message="n_params should be a whole number and largest_piece a string such as 'embed'.")
def test_params_answers_types(n_params, largest_piece):
    assert isinstance(n_params, int), 'n_params should be a whole number'
    assert isinstance(largest_piece, str), "largest_piece should be a string, e.g. 'embed'"

