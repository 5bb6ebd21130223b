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

@test_case(points=1, hidden=True, 
    failure_message="Think about which sites can hear the last word: with causal=True only the last site can, with causal=False every site does.")
def test_same_positions(causal_same, noncausal_same):
    from course.handles import student
    same, other = (student(causal_same), student(noncausal_same))
    assert type(same) in (list, tuple) and sorted(same) == [0, 1, 2], 'with causal=True, which positions cannot see the last word?'
    assert type(other) in (list, tuple) and list(other) == [], 'with causal=False, can any position avoid hearing the last word?'

