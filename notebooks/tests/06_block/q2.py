from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 9

@test_case(points=1, hidden=False, 
    failure_message="block = Block(32, 4) should turn a (64, 5, 32) batch into a (64, 5, 32) batch.")
def test_block_shape(Block):
    import math
    import torch
    from course.handles import student
    Block = student(Block)

    def reference_attention(q, k, v):
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return (weights @ v, weights)
    reference_attention.__qualname__ = 'reference_attention'
    torch.manual_seed(0)
    block = Block(32, 4)
    with block.swapped(Attention=reference_attention):
        out = block(torch.randn(64, 5, 32))
    assert tuple(out.shape) == (64, 5, 32), f'Block(32, 4) on a (64, 5, 32) batch should give (64, 5, 32), yours gives {tuple(out.shape)}'

