from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 1

@test_case(points=0, hidden=False, 
    failure_message="head_params should be a whole number.")
def test_is_number(head_params):
    assert isinstance(head_params, int) or float(head_params) == int(head_params)

