from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1

@test_case(points=0.5, hidden=False, 
    failure_message="Compare net(x)[0] for two batches with the same first sentence: torch.allclose should say True.")
def test_first_unchanged_answer(first_unchanged):
    import torch
    from course.handles import student
    answer = student(first_unchanged)
    ok = answer is True or (type(answer) is torch.Tensor and answer.numel() == 1 and (bool(answer.item()) is True))
    assert ok, 'first_unchanged should be True: the logits of the first sentence should not change when the other sentences do'

@test_case(points=0.5, hidden=True, 
    failure_message="One sentence's logits must not depend on the other sentences of the batch.")
def test_batch_independence(MyTransformer):
    import math
    import torch
    from course.handles import student, close
    MyTransformer = student(MyTransformer)
    torch.manual_seed(5)
    net = MyTransformer(10, dim=12, heads=3, layers=2)
    new = {}
    for name, t in net.params(values=False).items():
        if t.dim() >= 2:
            new[name] = torch.randn(t.shape) / math.sqrt(t.shape[-1])
        elif name.endswith('weight'):
            new[name] = 1 + 0.5 * torch.randn(t.shape)
        else:
            new[name] = 0.5 * torch.randn(t.shape)
    net.set_params(new)
    x = torch.randint(10, (5, 7))
    other = torch.randint(10, (5, 7))
    other[0] = x[0]
    a, b, alone = (net(x), net(other), net(x[:1]))
    assert type(a) is torch.Tensor and tuple(a.shape) == (5, 7, 10), 'your MyTransformer does not give logits of shape (batch, L, vocab_size) yet'
    assert close(a[0], b[0], atol=1e-05), 'the logits of sentence 0 changed when only the other sentences of the batch changed'
    assert close(a[0], alone[0], atol=1e-05), 'sentence 0 alone gives other logits than sentence 0 in a batch'

