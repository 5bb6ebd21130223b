from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1

@test_case(points=0, hidden=False, 
    failure_message="causal_same and noncausal_same should be lists of positions (0 to 3).")
def test_same_positions_types(causal_same, noncausal_same):
    from course.handles import student
    same, other = (student(causal_same), student(noncausal_same))
    assert type(same) in (list, tuple) and type(other) in (list, tuple), 'causal_same and noncausal_same should be lists of positions, e.g. [0, 3]'

