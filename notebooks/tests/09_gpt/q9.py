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

