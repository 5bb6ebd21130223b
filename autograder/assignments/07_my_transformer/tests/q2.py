from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 2


@test_case(points=0, hidden=False, failure_message="n_params should be a whole number and largest_piece a string such as 'embed'.")  # noqa: E501
def test_params_answers_types(n_params, largest_piece):
    from course.handles import student
    n, piece = student(n_params), student(largest_piece)
    assert type(n) is int, "n_params should be a whole number"
    assert type(piece) is str, "largest_piece should be a string, e.g. 'embed'"


@test_case(points=1, hidden=True, failure_message='Count again: embed 2002 x 128, position 64 x 128, four blocks, the final norm, and out (128 x 2002 plus a bias); Count(big) does it for you.')  # noqa: E501
def test_n_params(n_params, MyTransformer):
    from course.handles import number, student
    got = number(student(n_params))
    own = None
    try:                                 # the count of your own network (right or not)
        own = sum(t.numel() for t in student(MyTransformer)(2002).params(values=False).values())
    except Exception:
        pass
    assert got in (1314514, own), "that is not the number of parameters of a default MyTransformer(2002)"


@test_case(points=1, hidden=True, failure_message='Compare the counts of embed, position, one block, norm and out: which single piece is biggest?')  # noqa: E501
def test_largest_piece(largest_piece, MyTransformer):
    from course.handles import student
    answer = student(largest_piece)
    assert type(answer) is str, "largest_piece should be a string"
    answer = answer.strip().strip("'\"").lower()
    for prefix in ("self.", "net.", "big."):
        answer = answer.replace(prefix, "")
    if answer in ("one block", "a block", "blocks[0]", "blocks.0", "blocks", "block 0"):
        answer = "block"
    accepted = {"out"}
    try:                                 # the biggest piece of your own network (right or not)
        sizes = {"embed": 0, "position": 0, "block": 0, "norm": 0, "out": 0}
        for name, t in student(MyTransformer)(2002).params(values=False).items():
            first = "block" if name.startswith("blocks.0.") else name.split(".")[0]
            if first in sizes:
                sizes[first] += t.numel()
        accepted |= {name for name, size in sizes.items() if size == max(sizes.values())}
    except Exception:
        pass
    assert answer in accepted, "that is not the single piece with the most parameters"
