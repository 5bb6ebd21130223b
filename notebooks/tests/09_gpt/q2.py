from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 8

@test_case(points=1, hidden=False, 
    failure_message="SelfAttention(cfg) should have self.qkv = nn.Linear(dim, 3 * dim) and self.out = nn.Linear(dim, dim), and attn(x) should have the shape (B, T, D) of x. (This check uses one head.)")
def test_layers_and_shape(Config, SelfAttention):
    import torch
    from course.handles import student
    Config, SelfAttention = (student(Config), student(SelfAttention))
    torch.manual_seed(0)
    cfg = Config(vocab_size=1024, context=128, dim=128, heads=1, layers=4, dropout=0.0)
    attn = SelfAttention(cfg)
    shapes = {name: tuple(t.shape) for name, t in attn.params(values=False).items()}
    assert attn.qkv.isa(torch.nn.Linear) and shapes.get('qkv.weight') == (384, 128), 'self.qkv should be nn.Linear(128, 384)'
    assert attn.out.isa(torch.nn.Linear) and shapes.get('out.weight') == (128, 128), 'self.out should be nn.Linear(128, 128)'
    out = attn(torch.randn(2, 16, 128))
    assert tuple(out.shape) == (2, 16, 128), f'attn(x) has shape {tuple(out.shape)}, expected (2, 16, 128)'

