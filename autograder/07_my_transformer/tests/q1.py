from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 10

@test_case(points=1, hidden=False, 
    failure_message="net = MyTransformer(len(vocab), dim=32, heads=2, layers=2) should turn a batch of 64 four-word sentences into logits of shape (64, 4, 14).")
def test_mytransformer_shape(MyTransformer):
    import torch
    from course import vocab, SamplePInit
    torch.manual_seed(0)
    net = MyTransformer(len(vocab), dim=32, heads=2, layers=2)
    x = torch.stack([SamplePInit() for b in range(64)])
    out = net(x)
    assert tuple(out.shape) == (64, 4, 14), f'MyTransformer(len(vocab), dim=32, heads=2, layers=2) on a (64, 4) batch should give (64, 4, 14), yours gives {tuple(out.shape)}'

@test_case(points=1, hidden=True, 
    failure_message="MyTransformer should turn tokens of shape (batch, L) into logits of shape (batch, L, vocab_size) for any sizes up to max_length (and (L,) into (L, vocab_size)).")
def test_mytransformer_shapes_random(MyTransformer):
    import torch
    torch.manual_seed(1)
    for V, dim, heads, layers, max_length, batch, L in [(11, 12, 3, 3, 9, 2, 9), (7, 8, 2, 1, 20, 3, 13), (30, 16, 4, 2, 64, 1, 1)]:
        net = MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length)
        out = net(torch.randint(V, (batch, L)))
        assert tuple(out.shape) == (batch, L, V), f'MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}, max_length={max_length}) on a batch of shape {(batch, L)} gave {tuple(out.shape)}, expected {(batch, L, V)}'
        out = net(torch.randint(V, (L,)))
        assert tuple(out.shape) == (L, V), f'on one sentence of shape {(L,)} your MyTransformer gave {tuple(out.shape)}, expected {(L, V)}: use x.shape[-1] for the length'

@test_case(points=1.5, hidden=True, 
    failure_message="The number of parameters is wrong: embed (vocab_size x dim), position (max_length x dim), layers separate Blocks in an nn.ModuleList, one final nn.LayerNorm(dim), and out = nn.Linear(dim, vocab_size).")
def test_mytransformer_parameter_count(MyTransformer):

    def count(net):
        return sum((p.numel() for p in net.parameters()))
    got = count(MyTransformer(2002))
    assert got == 1314514, f'a default MyTransformer(2002) should have 1,314,514 parameters, yours has {got:,}'
    for V, dim, heads, layers, max_length in [(11, 12, 3, 3, 9), (7, 8, 2, 1, 20), (30, 16, 4, 2, 64)]:
        net = MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length)
        block = 12 * dim * dim + 10 * dim
        want = V * dim + max_length * dim + layers * block + 2 * dim + dim * V + V
        got = count(net)
        assert got == want, f'MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}, max_length={max_length}) should have {want} parameters, yours has {got}: token table, position table with max_length rows, {layers} blocks, one final norm, out'

@test_case(points=1, hidden=True, 
    failure_message="Check the pieces: self.embed, self.position (max_length rows), self.blocks (an nn.ModuleList of separate Blocks), self.norm (its own LayerNorm) and self.out.")
def test_mytransformer_pieces(MyTransformer):
    import torch.nn as nn
    net = MyTransformer(13, dim=8, heads=2, layers=3, max_length=7)
    assert isinstance(net.blocks, nn.ModuleList) and len(net.blocks) == 3, 'self.blocks should be an nn.ModuleList of `layers` blocks'
    assert len({id(b) for b in net.blocks}) == 3, 'your blocks are all the same block: make a new Block for each layer'
    assert tuple(net.position.weight.shape) == (7, 8), f'self.position should have max_length = 7 rows of dim = 8, yours has shape {tuple(net.position.weight.shape)}'
    assert tuple(net.embed.weight.shape) == (13, 8), 'self.embed should be nn.Embedding(vocab_size, dim)'
    assert isinstance(net.norm, nn.LayerNorm) and (not any((net.norm is m for b in net.blocks for m in b.modules()))), 'self.norm should be a new nn.LayerNorm(dim) of its own'

@test_case(points=2, hidden=True, 
    failure_message="Your forward is not: token vectors + position vectors, then every block in turn (in order), then self.norm, then self.out.")
def test_mytransformer_values(MyTransformer):
    import math, torch, torch.nn as nn, torch.nn.functional as F
    torch.manual_seed(2)
    for V, dim, heads, layers, max_length, batch, L in [(11, 12, 3, 3, 9, 2, 6), (7, 8, 2, 2, 16, 3, 16), (20, 16, 4, 1, 5, 1, 5)]:
        net = MyTransformer(V, dim=dim, heads=heads, layers=layers, max_length=max_length)
        with torch.no_grad():
            for m in net.modules():
                if isinstance(m, nn.LayerNorm):
                    m.weight.copy_(1 + 0.5 * torch.randn(dim))
                    m.bias.copy_(0.5 * torch.randn(dim))
                elif isinstance(m, nn.Linear):
                    m.weight.normal_(0, 2 / math.sqrt(m.in_features))
                    if m.bias is not None:
                        m.bias.normal_(0, 0.5)
                elif isinstance(m, nn.Embedding):
                    m.weight.normal_(0, 1)
        x = torch.randint(V, (batch, L))
        with torch.no_grad():
            h = net.embed.weight[x] + net.position.weight[:L]
            for block in net.blocks:
                h = block(h)
            h = F.layer_norm(h, (dim,), net.norm.weight, net.norm.bias, net.norm.eps)
            want = h @ net.out.weight.T + net.out.bias
            got = net(x)
        assert got.shape == want.shape, f'wrong shape {tuple(got.shape)}'
        assert torch.allclose(got, want, atol=0.001, rtol=0.001), f'MyTransformer({V}, dim={dim}, heads={heads}, layers={layers}) does not compute out(norm(blocks(embed(x) + position(0..L-1)))): every block once, in order, then the final norm, then out'

@test_case(points=1, hidden=True, 
    failure_message="Every table and matrix should start small (standard deviation 0.02): call SmallStart(self) as the very last line of __init__, after all the pieces are made.")
def test_mytransformer_small_start(MyTransformer):
    import torch, torch.nn as nn
    torch.manual_seed(3)
    net = MyTransformer(300, dim=32, heads=2, layers=2, max_length=64)
    pieces = [m for m in net.modules() if isinstance(m, (nn.Linear, nn.Embedding))]
    assert len(pieces) >= 3, 'your MyTransformer has no tables or matrices yet'
    for name, m in net.named_modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            std = m.weight.std().item()
            assert 0.015 < std < 0.025, f"the weights of {name or 'your network'} have standard deviation {std:.3f}, not 0.02: call SmallStart(self) as the very last line of __init__"

@test_case(points=1, hidden=True, 
    failure_message="Your network should know where each token is: add self.position(torch.arange(L, device=x.device)) to the token vectors.")
def test_mytransformer_position_dependence(MyTransformer):
    import torch
    torch.manual_seed(4)
    net = MyTransformer(9, dim=16, heads=2, layers=2)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.3 * torch.randn_like(p))
        same = torch.full((1, 6), 4)
        out = net(same)[0]
        assert (out[0] - out[3]).abs().max() > 0.0001, 'the same token at two positions gives the same logits: does your network add the position vectors?'
        x = torch.randint(9, (1, 6))
        perm = torch.tensor([5, 4, 3, 2, 1, 0])
        assert not torch.allclose(net(x[:, perm]), net(x)[:, perm], atol=0.0001), 'reversing the sentence just reverses your logits: your network does not know the positions'

@test_case(points=1, hidden=True, 
    failure_message="Your forward makes its positions on the CPU even when x lives on a GPU: use torch.arange(x.shape[-1], device=x.device).")
def test_mytransformer_device(MyTransformer):
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    class OneDevice(TorchDispatchMode):

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            devices = {t.device.type for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and t.dim() > 0}
            if len(devices) > 1:
                raise AssertionError('two devices')
            return func(*args, **kwargs)
    net = MyTransformer(9, dim=8, heads=2, layers=2).to('meta')
    x = torch.zeros(2, 5, dtype=torch.long, device='meta')
    try:
        with OneDevice():
            out = net(x)
        ok = True
    except AssertionError:
        ok = False
    assert ok, 'with the network and x on another device, your forward makes a tensor on the CPU: use torch.arange(L, device=x.device)'
    assert tuple(out.shape) == (2, 5, 9)

@test_case(points=0.5, hidden=True, 
    failure_message="Your MyTransformer does not run yet, or breaks the rules: build MyTransformer from your own blocks; PyTorch's ready-made transformer pieces are not allowed.")
def test_mytransformer_rules(MyTransformer):
    import torch, torch.nn as nn, torch.nn.functional as F
    names = ['MultiheadAttention', 'Transformer', 'TransformerEncoder', 'TransformerEncoderLayer', 'TransformerDecoder', 'TransformerDecoderLayer']
    real = {n: getattr(nn, n) for n in names}
    real_sdpa = F.scaled_dot_product_attention

    def forbidden(*args, **kwargs):
        raise AssertionError('forbidden')
    try:
        F.scaled_dot_product_attention = forbidden
        for n in names:
            setattr(nn, n, forbidden)
        net = MyTransformer(9, dim=8, heads=2, layers=2)
        out = net(torch.randint(9, (2, 5)))
        ok = True
    except AssertionError:
        ok = False
    finally:
        F.scaled_dot_product_attention = real_sdpa
        for n, v in real.items():
            setattr(nn, n, v)
    assert isinstance(out, torch.Tensor) and out.shape == (2, 5, 9), 'your MyTransformer does not run yet, so the rules cannot be checked'
    assert ok, 'your MyTransformer uses nn.MultiheadAttention, nn.Transformer... or F.scaled_dot_product_attention, which the rules forbid'
    assert not any((isinstance(m, tuple(real.values())) for m in net.modules())), "your MyTransformer contains one of PyTorch's ready-made transformer modules"

