from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 10

@test_case(points=1, hidden=False, 
    failure_message="net = MyTransformer(len(vocab), dim=32, heads=2, layers=2) should turn a batch of 64 four-word sentences into logits of shape (64, 4, 14).")
def test_mytransformer_shape(MyTransformer):
    import torch
    from course import SamplePInit, vocab
    from course.handles import student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(0)
    net = MyTransformer(len(vocab), dim=32, heads=2, layers=2)
    x = torch.stack([SamplePInit() for b in range(64)])
    out = net(x)
    assert type(out) is torch.Tensor, 'MyTransformer should return a tensor of logits'
    assert tuple(out.shape) == (64, 4, 14), f'MyTransformer(len(vocab), dim=32, heads=2, layers=2) on a (64, 4) batch should give (64, 4, 14), yours gives {tuple(out.shape)}'

