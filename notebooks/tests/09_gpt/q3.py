from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 3

@test_case(points=1, hidden=False, 
    failure_message="MLP(cfg) should have self.up = nn.Linear(dim, 4 * dim) and self.down = nn.Linear(4 * dim, dim), and give back the shape of its input.")
def test_mlp_shape(Config, MLP):
    import torch
    from course.handles import student
    Config, MLP = (student(Config), student(MLP))
    torch.manual_seed(0)
    mlp = MLP(Config(vocab_size=1024, dropout=0.0))
    assert mlp.up.isa(torch.nn.Linear) and mlp.down.isa(torch.nn.Linear), 'MLP needs self.up and self.down (nn.Linear)'
    out = mlp(torch.randn(2, 16, 128))
    assert tuple(out.shape) == (2, 16, 128), f'mlp(x) has shape {tuple(out.shape)}, expected (2, 16, 128)'

