from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 7

@test_case(points=1, hidden=False, 
    failure_message="WithPosition(len(vocab)) should have embed, position and out, and turn a batch of shape (64, 4) into logits of shape (64, 4, len(vocab)).")
def test_page_shapes(WithPosition):
    import torch
    from course import SamplePInit, vocab
    torch.manual_seed(0)
    net = WithPosition(len(vocab))
    for name in ('embed', 'position', 'out'):
        assert hasattr(net, name), f'no self.{name}'
    x = torch.stack([SamplePInit() for b in range(64)])
    assert tuple(net(x).shape) == (64, 4, len(vocab)), f'got {tuple(net(x).shape)}'

