from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 7

@test_case(points=1, hidden=False, 
    failure_message="WithPosition(len(vocab)) should have embed, position and out, and turn a batch of shape (64, 4) into logits of shape (64, 4, len(vocab)).")
def test_page_shapes(WithPosition):
    import torch
    from course import SamplePInit, vocab
    from course.handles import StudentError, student
    WithPosition = student(WithPosition)
    torch.manual_seed(0)
    net = WithPosition(len(vocab))
    for name in ('embed', 'position', 'out'):
        try:
            getattr(net, name).info()
        except StudentError:
            raise AssertionError(f'no self.{name}') from None
    x = torch.stack([SamplePInit() for b in range(64)])
    logits = net(x)
    assert type(logits) is torch.Tensor, f'got a {type(logits).__name__}, not a tensor'
    assert tuple(logits.shape) == (64, 4, len(vocab)), f'got {tuple(logits.shape)}'

