from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3

@test_case(points=1, hidden=False, 
    failure_message="Block(cfg) should have self.norm1 and self.norm2 (nn.LayerNorm(dim)), self.attn = SelfAttention(cfg) and self.mlp = MLP(cfg), and give back the shape of its input. (This check uses one head.)")
def test_block_pieces(Config, Block):
    import torch
    from course.handles import student
    Config, Block = (student(Config), student(Block))
    torch.manual_seed(0)
    block = Block(Config(vocab_size=1024, heads=1, dropout=0.0))
    for name in ('norm1', 'norm2'):
        assert getattr(block, name).isa(torch.nn.LayerNorm), f'self.{name} should be nn.LayerNorm(dim)'
    assert block.attn.type().endswith('SelfAttention'), 'self.attn should be your SelfAttention(cfg)'
    assert block.mlp.type().endswith('MLP'), 'self.mlp should be your MLP(cfg)'
    out = block(torch.randn(2, 16, 128))
    assert tuple(out.shape) == (2, 16, 128), f'block(x) has shape {tuple(out.shape)}, expected (2, 16, 128)'

