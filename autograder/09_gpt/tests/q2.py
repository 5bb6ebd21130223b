from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 5

@test_case(points=1, hidden=False, 
    failure_message="SelfAttention(cfg) should have self.qkv = nn.Linear(dim, 3 * dim) and self.out = nn.Linear(dim, dim), and attn(x) should have the shape (B, T, D) of x. (This check uses one head.)")
def test_layers_and_shape(Config, SelfAttention):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, SelfAttention = (student(Config), student(SelfAttention))
    torch.manual_seed(0)
    cfg = Config(vocab_size=1024, context=128, dim=128, heads=1, layers=4, dropout=0.0)
    attn = SelfAttention(cfg)
    shapes = {name: tuple(t.shape) for name, t in attn.params(values=False).items()}
    assert attn.qkv.isa(torch.nn.Linear) and shapes.get('qkv.weight') == (384, 128), 'self.qkv should be nn.Linear(128, 384)'
    assert attn.out.isa(torch.nn.Linear) and shapes.get('out.weight') == (128, 128), 'self.out should be nn.Linear(128, 128)'
    out = attn(torch.randn(2, 16, 128))
    assert tuple(out.shape) == (2, 16, 128), f'attn(x) has shape {tuple(out.shape)}, expected (2, 16, 128)'

@test_case(points=1, hidden=True, 
    failure_message="SelfAttention(cfg) should have exactly 4*D^2 + 4*D trainable numbers: self.qkv = nn.Linear(dim, 3*dim) and self.out = nn.Linear(dim, dim), both with biases, and nothing else (the mask is a buffer, not a parameter). Keep the number of heads as self.heads.")
def test_parameter_count(Config, SelfAttention):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, SelfAttention = (student(Config), student(SelfAttention))
    for D, H, C in [(12, 3, 10), (16, 1, 20), (8, 2, 5)]:
        attn = SelfAttention(Config(vocab_size=7, context=C, dim=D, heads=H, layers=1, dropout=0.1))
        shapes = {name: tuple(t.shape) for name, t in attn.params(values=False).items()}
        assert shapes.get('qkv.weight') == (3 * D, D) and shapes.get('qkv.bias') == (3 * D,), f'dim={D}: self.qkv should be nn.Linear({D}, {3 * D}) with a bias'
        assert shapes.get('out.weight') == (D, D) and shapes.get('out.bias') == (D,), f'dim={D}: self.out should be nn.Linear({D}, {D}) with a bias'
        total = sum((math.prod(s) for s in shapes.values()))
        assert total == 4 * D * D + 4 * D, f'dim={D}: {total} trainable numbers, expected 4*D^2 + 4*D = {4 * D * D + 4 * D} ({sorted(shapes)})'
        assert attn.heads.get() == H, f'self.heads should be the number of heads, {H}'

@test_case(points=1, hidden=True, 
    failure_message="The mask should be a buffer of shape (context, context), made once in __init__ and kept with self.register_buffer('mask', ...): not a parameter (it is never trained), saved in state_dict(), and moved by .to(device) with the rest of the model.")
def test_mask_is_a_buffer(Config, SelfAttention):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, SelfAttention = (student(Config), student(SelfAttention))
    D, C = (12, 10)
    attn = SelfAttention(Config(vocab_size=7, context=C, dim=D, heads=1, layers=1, dropout=0.0))
    params = attn.params(values=False)
    assert not any((tuple(t.shape) == (C, C) for t in params.values())), 'the mask is a parameter: register it with self.register_buffer'
    square = [name for name, t in attn.buffers(values=False).items() if tuple(t.shape) == (C, C)]
    assert square, 'no buffer of shape (context, context): keep the mask with self.register_buffer("mask", ...)'
    saved = attn.state_dict()
    assert square[0] in saved, "the mask buffer is not in state_dict(): don't make it persistent=False"
    attn.to('meta')
    moved = attn.buffers(values=False)
    assert moved[square[0]].device.type == 'meta', 'the mask did not move with .to(): is it registered as a buffer?'

@test_case(points=1, hidden=True, 
    failure_message="Dropout: in train() mode each number coming out of self.out is set to zero with probability cfg.dropout (and the others multiplied by 1/(1-p)), which nn.Dropout(cfg.dropout) does; in eval() mode nothing is dropped. Use nn.Dropout (or F.dropout with training=self.training) on the output of self.out.")
def test_dropout(Config, SelfAttention):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

    def nontrivial(shapes):
        """Values with some life in them for every weight and bias (the mask is left alone)."""
        values = {}
        for name, t in shapes.items():
            if not t.is_floating_point() or not name.endswith(('weight', 'bias')):
                continue
            if name.endswith('bias'):
                values[name] = 0.3 * torch.randn(t.shape, dtype=t.dtype)
            elif t.dim() == 1:
                values[name] = 1 + 0.3 * torch.randn(t.shape, dtype=t.dtype)
            else:
                values[name] = 1.5 * torch.randn(t.shape, dtype=t.dtype) / math.sqrt(t.shape[-1])
        return values
    Config, SelfAttention = (student(Config), student(SelfAttention))
    torch.manual_seed(3)
    attn = SelfAttention(Config(vocab_size=7, context=12, dim=16, heads=1, layers=1, dropout=0.5))
    attn.set_params(nontrivial(attn.params(values=False)))
    x = torch.randn(4, 10, 16)
    attn.eval()
    calm, calm_again = (attn(x), attn(x))
    assert close(calm, calm_again), 'in eval() mode two calls on the same x differ: dropout should be off'
    attn.train()
    first, second = (attn(x), attn(x))
    assert not close(first, second), 'in train() mode two calls on the same x give the same output: is there a dropout?'
    dropped = first.abs() < 1e-06
    kept = torch.isclose(first, 2 * calm, atol=1e-05, rtol=0.0001)
    assert bool((dropped | kept).all()), 'in train() mode each output number should be either 0 or twice the eval() value (dropout with p=0.5 on the output of self.out)'
    assert 0.35 < dropped.float().mean().item() < 0.65, f'{dropped.float().mean().item():.0%} of the outputs were dropped with dropout=0.5'

@test_case(points=1, hidden=True, 
    failure_message="Your SelfAttention should work on any device: with the model moved by .to(device) every tensor it uses must be there too. Keep the mask as a buffer (it moves with the model) and make nothing new on the CPU in forward.")
def test_device(Config, SelfAttention):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    from course.handles import watching, StudentError
    Config, SelfAttention = (student(Config), student(SelfAttention))
    attn = SelfAttention(Config(vocab_size=7, context=12, dim=16, heads=1, layers=1, dropout=0.0))
    attn.to('meta')
    with watching() as seen:
        try:
            out = attn.describe(torch.zeros(2, 9, 16, device='meta'))
        except StudentError as error:
            raise AssertionError(f'with the model on another device your forward failed: {error}') from None
    assert not seen.mixed_devices, f'your forward mixes devices ({sorted(seen.mixed_devices)}): is the mask a buffer?'
    assert type(out) is dict and out.get('shape') == [2, 9, 16] and (out.get('device') == 'meta'), "the output should be on the input's device"

