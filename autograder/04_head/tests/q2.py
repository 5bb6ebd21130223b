from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 1

@test_case(points=0, hidden=False, 
    failure_message="head_params should be a whole number.")
def test_is_number(head_params):
    assert isinstance(head_params, int) or float(head_params) == int(head_params)

@test_case(points=1, hidden=True, 
    failure_message="Not quite. Each of Q, K and V is a head_dim x dim matrix with no bias.")
def test_head_params(head_params):
    assert int(head_params) == 3 * 32 * 8

