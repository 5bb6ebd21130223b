from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 6

@test_case(points=1, hidden=False, 
    failure_message="GPT(Config(vocab_size=1024)) called on ids of shape (2, 16) should give logits of shape (2, 16, 1024). (This check uses one head.)")
def test_gpt_shape(Config, GPT, Block, SelfAttention, MLP):
    import torch
    from course.handles import student
    Config, GPT = (student(Config), student(GPT))

    class Same(torch.nn.Module):

        def forward(self, x):
            return x
    torch.manual_seed(0)
    cfg = Config(vocab_size=1024, heads=1, dropout=0.0)
    stand_ins = {}
    with torch.random.fork_rng(devices=[]):
        x = torch.randn(2, 16, 128)
        for name, piece in (('SelfAttention', SelfAttention), ('MLP', MLP), ('Block', Block)):
            try:
                with GPT.swapped(**stand_ins):
                    runs = tuple(student(piece)(cfg)(x).shape) == tuple(x.shape)
            except Exception:
                runs = False
            if not runs:
                stand_ins[name] = lambda *args: Same()
    with GPT.swapped(**stand_ins):
        net = GPT(cfg).eval()
    logits = net(torch.randint(0, 1024, (2, 16)))
    assert tuple(logits.shape) == (2, 16, 1024), f'the logits have shape {tuple(logits.shape)}, expected (2, 16, 1024)'

