from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1

@test_case(points=1, hidden=False, 
    failure_message="Call head = Head(32, 8) on x = torch.randn(64, 5, 32) and store the shapes of head(x) and of head.weights.")
def test_head_shapes(head_out_shape, head_weights_shape):
    assert tuple(head_out_shape) == (64, 5, 8), f'head(x) should have shape (64, 5, 8), you have {tuple(head_out_shape)}'
    assert tuple(head_weights_shape) == (64, 5, 5), f'head.weights should have shape (64, 5, 5), you have {tuple(head_weights_shape)}'

