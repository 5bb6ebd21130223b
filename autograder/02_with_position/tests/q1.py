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

@test_case(points=1, hidden=True, 
    failure_message="WithPosition(vocab_size, dim, max_length) should have embed = nn.Embedding(vocab_size, dim), position = nn.Embedding(max_length, dim) and out = nn.Linear(dim, vocab_size), and nothing else: vocab_size*dim + max_length*dim + dim*vocab_size + vocab_size parameters. Are you using the arguments (not fixed numbers)?")
def test_sizes(WithPosition):
    import torch
    for V, dim, M in [(14, 32, 64), (9, 6, 20), (30, 12, 7)]:
        net = WithPosition(V, dim, M) if (dim, M) != (32, 64) else WithPosition(V)
        assert isinstance(net.embed, torch.nn.Embedding) and tuple(net.embed.weight.shape) == (V, dim), 'embed'
        assert isinstance(net.position, torch.nn.Embedding) and tuple(net.position.weight.shape) == (M, dim), 'position'
        assert isinstance(net.out, torch.nn.Linear) and tuple(net.out.weight.shape) == (V, dim), 'out'
        assert sum((p.numel() for p in net.parameters())) == V * dim + M * dim + dim * V + V, 'count'
    net = WithPosition(vocab_size=11, dim=5, max_length=9)
    assert tuple(net.position.weight.shape) == (9, 5), 'keywords'

@test_case(points=1, hidden=True, 
    failure_message="For a batch of shape (batch, L), with any L up to max_length, the logits should have shape (batch, L, vocab_size).")
def test_random_shapes(WithPosition):
    import torch
    torch.manual_seed(1)
    for V, dim, M, batch, L in [(14, 32, 64, 3, 64), (9, 6, 20, 5, 11), (30, 12, 7, 1, 7), (5, 8, 16, 2, 1)]:
        net = WithPosition(V, dim, M)
        x = torch.randint(0, V, (batch, L))
        assert tuple(net(x).shape) == (batch, L, V)

@test_case(points=2, hidden=True, 
    failure_message="Your logits differ from out(embed[x_i] + position[i]) computed from your own tables: the vector of the word at position i plus the vector of position i (row i of self.position, for i = 0, 1, ..., L-1), then self.out.")
def test_values(WithPosition):
    import torch
    torch.manual_seed(2)
    for V, dim, M, batch, L in [(14, 32, 64, 4, 4), (9, 6, 20, 3, 13)]:
        net = WithPosition(V, dim, M)
        x = torch.randint(0, V, (batch, L))
        with torch.no_grad():
            h = net.embed.weight[x] + net.position.weight[:L]
            ref = h @ net.out.weight.T + net.out.bias
            assert torch.allclose(net(x), ref, atol=1e-05)

@test_case(points=1, hidden=True, 
    failure_message="The same word at different positions should get different logits: a sentence made of one word repeated must not give the same guess at every position. Are the position vectors added?")
def test_position_matters(WithPosition):
    import torch
    torch.manual_seed(3)
    net = WithPosition(14, 16, 10)
    with torch.no_grad():
        logits = net(torch.full((2, 6), 13))
        for i in range(1, 6):
            assert (logits[:, i] - logits[:, 0]).abs().max() > 0.001, f'position {i} same as 0'
        x = torch.tensor([[0, 1, 3, 4]])
        swapped = torch.tensor([[1, 0, 3, 4]])
        assert not torch.allclose(net(x)[:, [1, 0]], net(swapped)[:, [0, 1]], atol=0.0001)

@test_case(points=1, hidden=True, 
    failure_message="Your positions are not made on the device of x. When x lives on a GPU your network would crash. Make them with torch.arange(x.shape[-1], device=x.device).")
def test_device(WithPosition):
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._pytree import tree_flatten
    mixed = []

    class Devices(TorchFunctionMode):

        def __torch_function__(self, func, types, args=(), kwargs=None):
            tensors = [a for a in tree_flatten((args, kwargs or {}))[0] if isinstance(a, torch.Tensor) and a.dim() > 0]
            if len({a.device.type for a in tensors}) > 1:
                mixed.append(getattr(func, '__name__', str(func)))
            return func(*args, **kwargs or {})
    net = WithPosition(14, 16, 12).to('meta')
    x = torch.zeros(3, 5, dtype=torch.long, device='meta')
    with Devices():
        out = net(x)
    assert not mixed, f'mixed devices in {mixed}'
    assert out.device.type == 'meta', 'output not on the device of x'

