from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=0, hidden=False, 
    failure_message="rows_shape should be a shape (a torch.Size or a tuple) and identical_rows a list of row numbers between 0 and 4.")
def test_format(rows_shape, identical_rows):
    assert len(tuple(rows_shape)) >= 1
    assert all((int(i) == i and 0 <= i < 5 for i in identical_rows))

