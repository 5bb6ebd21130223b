from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 8

@test_case(points=1, hidden=False, 
    failure_message="For q, k, v of shape (5, 8) Attention must return out of shape (5, 8) and weights of shape (5, 5) whose rows add up to one.")
def test_one_sentence(Attention):
    import torch
    from course.handles import close, student
    Attention = student(Attention)
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 8)
    out, weights = Attention(q, k, v)
    assert tuple(out.shape) == (5, 8), f'out has shape {tuple(out.shape)}, expected (5, 8)'
    assert tuple(weights.shape) == (5, 5), f'weights has shape {tuple(weights.shape)}, expected (5, 5)'
    assert close(weights.sum(dim=-1), torch.ones(5)), 'the rows of the weights do not add up to one'

