from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 2

@test_case(points=0, hidden=False, 
    failure_message="rows_shape should be a shape (a torch.Size or a tuple) and identical_rows a list of row numbers between 0 and 4.")
def test_format(rows_shape, identical_rows):
    assert len(tuple(rows_shape)) >= 1
    assert all((int(i) == i and 0 <= i < 5 for i in identical_rows))

@test_case(points=1, hidden=True, 
    failure_message="Not the right shape: x has one index of length 5 (five words), and every word becomes a row of 8 numbers.")
def test_rows_shape(rows_shape):
    assert tuple(rows_shape) == (5, 8)

@test_case(points=1, hidden=True, 
    failure_message="Not the right rows. Row i of table[x] is the row of the table for the i-th word; which words of the sentence are the same?")
def test_identical_rows(identical_rows):
    assert sorted((int(i) for i in identical_rows)) == [0, 3]

