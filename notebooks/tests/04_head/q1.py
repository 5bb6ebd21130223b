from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 9

@test_case(points=1, hidden=False, 
    failure_message="For head = Head(32, 8) and x of shape (64, 5, 32), head(x) should have shape (64, 5, 8) and head.weights shape (64, 5, 5).")
def test_page_shapes(Head):
    import math
    import torch
    from course.handles import student
    Head = student(Head)

    def reference_attention(q, k, v):
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return (weights @ v, weights)
    reference_attention.__qualname__ = 'reference_attention'
    torch.manual_seed(0)
    head = Head(32, 8)
    with head.swapped(Attention=reference_attention):
        out = head(torch.randn(64, 5, 32))
        weights = head.weights.get()
    assert tuple(out.shape) == (64, 5, 8), f'head(x) has shape {tuple(out.shape)}'
    assert tuple(weights.shape) == (64, 5, 5), f'head.weights has shape {tuple(weights.shape)}'

