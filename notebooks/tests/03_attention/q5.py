from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 2

@test_case(points=1, hidden=False, 
    failure_message="shuffle_agrees should say what torch.allclose(shuffled_out, out[perm], atol=1e-6) says for your own Attention on your q[perm], k[perm], v[perm] (perm from torch.randperm(5)), compared with your out.")
def test_shuffle_agrees(Attention, q, k, v, perm, shuffle_agrees):
    import torch
    from course.checking import anchored
    from course.handles import student
    Attention = student(Attention)
    q, k, v, perm = (student(q), student(k), student(v), student(perm))
    answer = student(shuffle_agrees)
    if type(answer) is torch.Tensor and answer.numel() == 1 and (answer.dtype == torch.bool):
        answer = bool(answer.item())
    assert type(answer) is bool, 'shuffle_agrees should be True or False (what torch.allclose gives you)'
    assert type(perm) is torch.Tensor and sorted(perm.tolist()) == list(range(q.shape[0])), 'perm should be torch.randperm(5): every site once, in a new order'

    def shuffles(q, k, v):
        out, _ = Attention(q, k, v)
        shuffled_out, _ = Attention(q[perm], k[perm], v[perm])
        return type(out) is torch.Tensor and type(shuffled_out) is torch.Tensor and (shuffled_out.shape == out.shape) and torch.allclose(shuffled_out, out[perm], atol=1e-06)
    new = torch.Generator().manual_seed(26)
    truth = anchored(shuffles, (q, k, v), tuple(torch.randn(3, *q.shape, generator=new)), 'That shuffling the sites shuffles your output')
    assert answer == bool(truth), f'shuffle_agrees is {answer}, but for your Attention it is {bool(truth)}'

