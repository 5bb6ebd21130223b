from otter.test_files import test_case

OK_FORMAT = False

name = "q8"
points = 3

@test_case(points=1, hidden=False, 
    failure_message="Doesn't look into the future: False. The mask is missing or the wrong way round: allowed = torch.tril(...) (site i hears j <= i), and masked_fill(~allowed[:T, :T], -inf) on the dot products before the softmax; torch.triu would be wrong. (This check uses one head.)")
def test_no_peeking(Config, GPT):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, GPT = (student(Config), student(GPT))
    torch.manual_seed(0)
    net = GPT(Config(vocab_size=1024, heads=1, dropout=0.0)).eval()
    first = net(torch.tensor([[1, 5, 6, 7, 8, 9]]))
    second = net(torch.tensor([[1, 5, 6, 7, 8, 3]]))
    assert not torch.isnan(first).any(), 'the logits contain NaN: does every site still hear itself (the diagonal)?'
    assert close(first[:, :5], second[:, :5]), "Doesn't look into the future: False"

