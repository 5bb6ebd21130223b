from otter.test_files import test_case

OK_FORMAT = False

name = "q9"
points = 3

@test_case(points=1, hidden=False, 
    failure_message="Starting loss clearly above ln V (6.93 for 1024 tokens): self.apply(self.init_weights) is missing, or init_weights does not give every nn.Linear and nn.Embedding small weights (std 0.02). (This check uses one head.)")
def test_neutral_start(Config, GPT):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, GPT = (student(Config), student(GPT))
    torch.manual_seed(0)
    net = GPT(Config(vocab_size=1024, heads=1, dropout=0.0)).eval()
    ids, targets = torch.randint(0, 1024, (2, 2, 16))
    loss = F.cross_entropy(net(ids).reshape(-1, 1024), targets.reshape(-1)).item()
    assert abs(loss - math.log(1024)) < 0.15, f'Starting loss: {loss:.2f}, expected about ln(1024) = 6.93'

@test_case(points=1, hidden=True, 
    failure_message="init_weights should give the weights of every nn.Linear and nn.Embedding (the two tables and every layer in the blocks) a normal distribution with standard deviation 0.02, and set every nn.Linear's bias to zero; call self.apply(self.init_weights) at the end of __init__.")
def test_init_weights(Config, GPT):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, GPT = (student(Config), student(GPT))
    torch.manual_seed(1)
    net = GPT(Config(vocab_size=300, context=40, dim=32, heads=4, layers=2, dropout=0.1))
    kinds = {path: mro for path, mro in net.modules().items()}
    P = net.params()
    seen = {'Linear': 0, 'Embedding': 0}
    for path, mro in kinds.items():
        for kind in seen:
            if f"torch.nn.modules.{('linear' if kind == 'Linear' else 'sparse')}.{kind}" not in mro:
                continue
            seen[kind] += 1
            weight = P.get(f'{path}.weight')
            if weight is not None:
                std, mean = (weight.std().item(), weight.mean().item())
                assert 0.017 < std < 0.023 and abs(mean) < 0.004, f'{path}.weight has mean {mean:.3f} and standard deviation {std:.3f}, expected 0 and 0.02'
            bias = P.get(f'{path}.bias')
            if bias is not None:
                assert bias.abs().max().item() == 0, f'{path}.bias is not zero'
    assert seen['Linear'] >= 1 and seen['Embedding'] == 2, f'found {seen} Linear and Embedding pieces'

@test_case(points=1, hidden=True, 
    failure_message="A new GPT should start neutral for any vocabulary size V: starting loss about ln V. Is self.apply(self.init_weights) the last line of __init__ (after the tying)?")
def test_neutral_start_any_vocabulary(Config, GPT):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, GPT = (student(Config), student(GPT))
    torch.manual_seed(2)
    for V in (500, 5000):
        net = GPT(Config(vocab_size=V, context=32, dim=64, heads=1, layers=2, dropout=0.0)).eval()
        ids, targets = torch.randint(0, V, (2, 4, 24))
        loss = F.cross_entropy(net(ids).reshape(-1, V), targets.reshape(-1)).item()
        assert abs(loss - math.log(V)) < 0.1, f'vocabulary {V}: starting loss {loss:.2f}, expected about ln({V}) = {math.log(V):.2f}'

