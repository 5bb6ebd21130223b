from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 1


@test_case(points=1, hidden=False, failure_message='Call head = Head(32, 8) on x = torch.randn(64, 5, 32) and store the shapes of head(x) and of head.weights.')  # noqa: E501
def test_head_shapes(head_out_shape, head_weights_shape):
    from course.handles import student
    out_shape, weights_shape = (tuple(s) if type(s) in (tuple, list) else s
                                for s in (student(head_out_shape), student(head_weights_shape)))
    assert out_shape == (64, 5, 8), \
        f"head(x) should have shape (64, 5, 8), you have {out_shape}"
    assert weights_shape == (64, 5, 5), \
        f"head.weights should have shape (64, 5, 5), you have {weights_shape}"
