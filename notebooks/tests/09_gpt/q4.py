from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = 3

@test_case(points=1, hidden=False, 
    failure_message="Block(cfg) should have self.norm1 and self.norm2 (nn.LayerNorm(dim)), self.attn = SelfAttention(cfg) and self.mlp = MLP(cfg), and give back the shape of its input. (This check uses one head.)")
def test_block_pieces(Config, Block, SelfAttention, MLP):
    import torch
    from course.handles import student
    Config, Block = (student(Config), student(Block))
    SelfAttention, MLP = (student(SelfAttention), student(MLP))

    class Same(torch.nn.Module):

        def forward(self, x):
            return x
    torch.manual_seed(0)
    cfg = Config(vocab_size=1024, heads=1, dropout=0.0)
    block = Block(cfg)
    for name in ('norm1', 'norm2'):
        assert getattr(block, name).isa(torch.nn.LayerNorm), f'self.{name} should be nn.LayerNorm(dim)'
    assert block.attn.type().endswith('SelfAttention'), 'self.attn should be your SelfAttention(cfg)'
    assert block.mlp.type().endswith('MLP'), 'self.mlp should be your MLP(cfg)'
    x = torch.randn(2, 16, 128)
    stand_ins = {}
    with torch.random.fork_rng(devices=[]):
        for name, piece in (('SelfAttention', SelfAttention), ('MLP', MLP)):
            try:
                runs = tuple(piece(cfg)(x).shape) == tuple(x.shape)
            except Exception:
                runs = False
            if not runs:
                stand_ins[name] = lambda *args: Same()
    if stand_ins:
        with Block.swapped(**stand_ins):
            block = Block(cfg)
    out = block(x)
    assert tuple(out.shape) == (2, 16, 128), f'block(x) has shape {tuple(out.shape)}, expected (2, 16, 128)'

