from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 10

@test_case(points=1, hidden=False, 
    failure_message="net = MyTransformer(len(vocab), dim=32, heads=2, layers=2) should turn a batch of 64 four-word sentences into logits of shape (64, 4, 14).")
def test_mytransformer_shape(MyTransformer):
    import torch
    from course import vocab, SamplePInit
    from course.handles import student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(0)
    net = MyTransformer(len(vocab), dim=32, heads=2, layers=2)
    x = torch.stack([SamplePInit() for b in range(64)])
    out = net(x)
    assert type(out) is torch.Tensor, 'MyTransformer should return a tensor of logits'
    assert tuple(out.shape) == (64, 4, 14), f'MyTransformer(len(vocab), dim=32, heads=2, layers=2) on a (64, 4) batch should give (64, 4, 14), yours gives {tuple(out.shape)}'

@test_case(points=1, hidden=True, 
    failure_message="MyTransformer should turn tokens of shape (batch, L) into logits of shape (batch, L, vocab_size) for any sizes up to max_length (and (L,) into (L, vocab_size)).")
def test_mytransformer_shapes_random(MyTransformer):
    import torch
    from course.handles import student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(1)
    for V, dim, heads, layers, max_length, batch, L in [(11, 12, 3, 3, 9, 2, 9), (7, 8, 2, 1, 20, 3, 13), (30, 16, 4, 2, 64, 1, 1)]:
        net = MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length)
        out = net(torch.randint(V, (batch, L)))
        assert type(out) is torch.Tensor and tuple(out.shape) == (batch, L, V), f"MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}, max_length={max_length}) on a batch of shape {(batch, L)} gave {tuple(getattr(out, 'shape', ()))}, expected {(batch, L, V)}"
        out = net(torch.randint(V, (L,)))
        assert type(out) is torch.Tensor and tuple(out.shape) == (L, V), f"on one sentence of shape {(L,)} your MyTransformer gave {tuple(getattr(out, 'shape', ()))}, expected {(L, V)}: use x.shape[-1] for the length"

@test_case(points=2.5, hidden=True, 
    failure_message="Check the pieces and the number of parameters: self.embed (vocab_size x dim), self.position (max_length x dim), self.blocks (an nn.ModuleList of `layers` separate Blocks), self.norm (a new nn.LayerNorm(dim) of its own) and self.out = nn.Linear(dim, vocab_size).")
def test_mytransformer_parameter_count(MyTransformer):
    import torch.nn as nn
    from course.handles import student
    MyTransformer = student(MyTransformer)

    def count(net):
        return sum((t.numel() for t in net.params(values=False).values()))
    net = MyTransformer(13, dim=8, heads=2, layers=3, max_length=7)
    assert net.blocks.isa(nn.ModuleList), 'self.blocks should be an nn.ModuleList (a plain Python list hides the blocks from PyTorch)'
    assert len(net.blocks) == 3, f'MyTransformer(..., layers=3) should have 3 blocks, yours has {len(net.blocks)}'
    assert len({b.identity() for b in net.blocks}) == 3, 'your blocks are all the same block: make a new Block for each layer'
    shapes = {name: tuple(t.shape) for name, t in net.params(values=False).items()}
    assert shapes.get('embed.weight') == (13, 8), 'self.embed should be nn.Embedding(vocab_size, dim)'
    assert shapes.get('position.weight') == (7, 8), f"self.position should have max_length = 7 rows of dim = 8, yours has shape {shapes.get('position.weight')}"
    assert net.norm.isa(nn.LayerNorm) and 'norm' in net.modules(), "self.norm should be a new nn.LayerNorm(dim) of its own, not one of the blocks' norms"
    got = count(MyTransformer(2002))
    assert got == 1314514, f'a default MyTransformer(2002) should have 1,314,514 parameters, yours has {got:,}'
    for V, dim, heads, layers, max_length in [(11, 12, 3, 3, 9), (7, 8, 2, 1, 20), (30, 16, 4, 2, 64)]:
        block = 12 * dim * dim + 10 * dim
        want = V * dim + max_length * dim + layers * block + 2 * dim + dim * V + V
        got = count(MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length))
        assert got == want, f'MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}, max_length={max_length}) should have {want} parameters, yours has {got}: token table, position table with max_length rows, {layers} blocks, one final norm, out'

@test_case(points=2, hidden=True, 
    failure_message="After the token and position vectors, your forward should send them through every block of self.blocks once, in order (each block's output is the next block's input), then apply self.norm and then self.out.")
def test_mytransformer_values(MyTransformer):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    MyTransformer = student(MyTransformer)
    torch.manual_seed(2)
    for V, dim, heads, layers, max_length, batch, L in [(11, 12, 3, 3, 9, 2, 6), (7, 8, 2, 2, 16, 3, 16), (20, 16, 4, 1, 5, 1, 5)]:
        net = MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length)
        new = {}
        for name, t in net.params(values=False).items():
            if t.dim() >= 2:
                new[name] = torch.randn(t.shape) / math.sqrt(t.shape[-1])
            elif name.endswith('weight'):
                new[name] = 1 + 0.5 * torch.randn(t.shape)
            else:
                new[name] = 0.5 * torch.randn(t.shape)
        new['embed.weight'] = torch.randn(V, dim)
        new['position.weight'] = torch.zeros(net.params(values=False)['position.weight'].shape)
        net.set_params(new)
        p = net.params()
        norm, out = (net.norm.params(), net.out.params())
        x = torch.randint(V, (batch, L))
        got = net(x)
        h = p['embed.weight'][x]
        for block in net.blocks:
            h = block(h)
        h = F.layer_norm(h, (dim,), norm['weight'], norm['bias'], 1e-05)
        want = h @ out['weight'].T + out['bias']
        assert type(got) is torch.Tensor and tuple(got.shape) == tuple(want.shape), f"wrong shape {tuple(getattr(got, 'shape', ()))}"
        assert close(got, want, atol=0.0001, rtol=0.0001), f'MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}) does not compute out(norm(block_n(...block_1(h)))): every block once, in order, then the final norm, then out'

@test_case(points=1, hidden=True, 
    failure_message="Every table and matrix should start small (standard deviation 0.02): call SmallStart(self) as the very last line of __init__, after all the pieces are made.")
def test_mytransformer_small_start(MyTransformer):
    import torch
    from course.handles import student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(3)
    net = MyTransformer(300, dim=32, heads=2, layers=2, max_length=64)
    params = net.params()
    kinds = ('torch.nn.modules.linear.Linear', 'torch.nn.modules.sparse.Embedding')
    pieces = [path for path, classes in net.modules().items() if any((k in classes for k in kinds))]
    assert len(pieces) >= 3, 'your MyTransformer has no tables or matrices yet'
    for path in pieces:
        std = float(params[path + '.weight'].std())
        assert 0.015 < std < 0.025, f'the weights of {path} have standard deviation {std:.3f}, not 0.02: call SmallStart(self) as the very last line of __init__'

@test_case(points=1, hidden=True, 
    failure_message="Your network should know where each token is: the vector that goes into the first block at position i is the token's vector plus row i of the position table, self.embed(x) + self.position(torch.arange(L, device=x.device)).")
def test_mytransformer_position_dependence(MyTransformer):
    import math
    import torch
    from course.handles import student, close
    MyTransformer = student(MyTransformer)
    torch.manual_seed(4)
    for V, dim, heads, layers, max_length, L in [(12, 16, 2, 2, 10, 7), (9, 8, 2, 1, 16, 9), (20, 12, 3, 2, 64, 5)]:
        net = MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length)
        new = {}
        for name, t in net.params(values=False).items():
            if t.dim() >= 2:
                new[name] = torch.randn(t.shape) / math.sqrt(t.shape[-1])
            elif name.endswith('weight'):
                new[name] = 1 + 0.5 * torch.randn(t.shape)
            else:
                new[name] = 0.5 * torch.randn(t.shape)
        net.set_params(new)
        p = net.params()
        x = torch.randperm(V)[:L][None]
        before = net(x)
        table = p['embed.weight'].clone()
        table[x[0]] = table[x[0]] + p['position.weight'][:L]
        net.set_params({'embed.weight': table, 'position.weight': torch.zeros(p['position.weight'].shape)})
        after = net(x)
        assert type(before) is torch.Tensor and close(after, before, atol=1e-05, rtol=1e-05), 'your network does not add the position vectors (row i of self.position for position i) to the token vectors'

@test_case(points=1, hidden=True, 
    failure_message="Your forward makes its positions on the CPU even when x lives on a GPU: use torch.arange(x.shape[-1], device=x.device).")
def test_mytransformer_device(MyTransformer):
    import torch
    from course.handles import student, watching
    MyTransformer = student(MyTransformer)
    net = MyTransformer(9, dim=8, heads=2, layers=2)
    net.to('meta')
    for block in net.blocks:
        block.to('meta')
    x = torch.zeros(2, 5, dtype=torch.long, device='meta')
    with watching() as seen:
        out = net.describe(x)
    assert not seen.mixed_devices, 'with the network and x on another device, your forward makes a tensor on the CPU: use torch.arange(L, device=x.device)'
    assert type(out) is dict and out.get('shape') == [2, 5, 9] and (out.get('device') == 'meta'), 'your MyTransformer gives the wrong shape on another device'

@test_case(points=0.5, hidden=True, 
    failure_message="Your MyTransformer does not run yet, or breaks the rules: build MyTransformer from your own blocks; PyTorch's ready-made transformer pieces are not allowed.")
def test_mytransformer_rules(MyTransformer):
    import torch
    from course.handles import student, broken_rules
    MyTransformer = student(MyTransformer)
    torch.manual_seed(5)
    net = MyTransformer(9, dim=8, heads=2, layers=2)
    out = net(torch.randint(9, (2, 5)))
    assert type(out) is torch.Tensor and tuple(out.shape) == (2, 5, 9), 'your MyTransformer does not run yet, so the rules cannot be checked'
    broken = broken_rules(MyTransformer, net)
    assert not broken, '; '.join(broken)

