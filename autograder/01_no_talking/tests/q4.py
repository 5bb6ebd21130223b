from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 1

@test_case(points=0, hidden=False, 
    failure_message="batch_shape should be a shape (a torch.Size or a tuple).")
def test_batch_shape_format(batch_shape):
    assert len(tuple(batch_shape)) >= 1

@test_case(points=1, hidden=True, 
    failure_message="Not the right shape. The batch has shape (64, 4): every one of its integers becomes a vector of 8 numbers.")
def test_batch_shape(batch_shape):
    assert tuple(batch_shape) == (64, 4, 8)

