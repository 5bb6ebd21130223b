from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1


@test_case(points=0, hidden=False, failure_message='causal_same and noncausal_same should be lists of positions (0 to 3).')  # noqa: E501
def test_same_positions_types(causal_same, noncausal_same):
    from course.handles import student
    same, other = student(causal_same), student(noncausal_same)
    assert type(same) in (list, tuple) and type(other) in (list, tuple), \
        "causal_same and noncausal_same should be lists of positions, e.g. [0, 3]"


@test_case(points=1, hidden=True, failure_message='Think about which sites can hear the last word: with causal=True only the last site can, with causal=False every site does.')  # noqa: E501
def test_same_positions(causal_same, noncausal_same, MyTransformer):
    from autograder.checks import causal
    from course.handles import student
    same, other = student(causal_same), student(noncausal_same)
    assert type(same) in (list, tuple) and type(other) in (list, tuple), \
        "causal_same and noncausal_same should be lists of positions"
    same, other = sorted(int(i) for i in same), sorted(int(i) for i in other)
    # the page's answer, or what your own MyTransformer does (when it computes)
    MyTransformer = student(MyTransformer)
    assert same == [0, 1, 2] or same == causal.unchanged_positions(MyTransformer, True), \
        "with causal=True, which positions cannot hear the last word?"
    assert other == [] or other == causal.unchanged_positions(MyTransformer, False), \
        "with causal=False, can any position avoid hearing the last word?"
