from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = 2


@test_case(points=0, hidden=False, failure_message='gpt_params and tying_saves should be numbers.')
def test_counts_are_numbers(gpt_params, tying_saves):
    from course.handles import student
    for value in (student(gpt_params), student(tying_saves)):
        assert type(value) in (int, float), "gpt_params and tying_saves should be numbers"


@test_case(points=1, hidden=True, failure_message='Not quite. Count each piece: tokens V*D, positions T*D, per block two LayerNorms (2D each), qkv (D*3D + 3D), out (D*D + D), up (D*4D + 4D), down (4D*D + D); four blocks; the final LayerNorm 2D; the head nothing (it is the token table).')  # noqa: E501
def test_gpt_params(gpt_params):
    from course.handles import number, student
    assert number(student(gpt_params)) == 940_800


@test_case(points=1, hidden=True, failure_message='Not quite. Without tying the head would be a second table of its own, one row of dim = 128 numbers for each of the 2002 tokens (and no bias).')  # noqa: E501
def test_tying_saves(tying_saves):
    from course.handles import number, student
    assert number(student(tying_saves)) == 2002 * 128
