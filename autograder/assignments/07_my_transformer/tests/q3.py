from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1


@test_case(points=0.5, hidden=False, failure_message='Make x2 (a batch with the same first sentence as x and different others) and compare net(x)[0] with net(x2)[0]: torch.allclose should say True.')  # noqa: E501
def test_first_unchanged_answer(first_unchanged, net, x, x2):
    import torch

    from course.handles import student
    answer, net, x, x2 = student(first_unchanged), student(net), student(x), student(x2)
    ok = answer is True or (type(answer) is torch.Tensor and answer.numel() == 1
                            and bool(answer.item()) is True)
    assert ok, \
        "first_unchanged should be True: the logits of the first sentence should not change when the other " \
        "sentences do"
    assert type(x) is torch.Tensor and type(x2) is torch.Tensor and x.dim() == 2 and x2.dim() == 2 \
        and x2.shape[1] == x.shape[1] and len(x) >= 2 and len(x2) >= 2, \
        "x2 should be a second batch of sentences like x, of shape (batch, 4)"
    assert torch.equal(x2[0], x[0]), "x2[0] should be the same sentence as x[0]"
    n = min(len(x), len(x2))
    differ = [i for i in range(1, n) if not torch.equal(x2[i], x[i])]
    assert differ, "the other sentences of x2 should differ from those of x"
    a, b = net(x), net(x2)
    assert type(a) is torch.Tensor and type(b) is torch.Tensor and a.dim() == 3 and len(a) == len(x) \
        and len(b) == len(x2), \
        "net(x) should give logits of shape (batch, 4, vocab_size)"
    assert not torch.allclose(a[differ], b[differ]), \
        "net gives the same logits for different sentences: it should be your MyTransformer"
    assert torch.allclose(a[0], b[0]), \
        "with your net, x and x2, torch.allclose(net(x)[0], net(x2)[0]) is not True"


@test_case(points=0.5, hidden=True, failure_message="One sentence's logits must not depend on the other sentences of the batch.")  # noqa: E501
def test_batch_independence(MyTransformer):
    import torch

    from autograder.checks import params, work
    from course.handles import close, student
    MyTransformer = student(MyTransformer)
    torch.manual_seed(5)
    work.transformer_works(lambda: MyTransformer(10, dim=12, heads=3, layers=2), 10)
    net = MyTransformer(10, dim=12, heads=3, layers=2)
    net.set_params(params.scaled(net.params(values=False), matrix=1.0, weight=(1, 0.5)))
    x = torch.randint(10, (5, 7))
    other = torch.randint(10, (5, 7))
    other[0] = x[0]
    a, b, alone = net(x), net(other), net(x[:1])
    assert type(a) is torch.Tensor and tuple(a.shape) == (5, 7, 10), \
        "your MyTransformer does not give logits of shape (batch, L, vocab_size) yet"
    assert close(a[0], b[0], atol=1e-5), \
        "the logits of sentence 0 changed when only the other sentences of the batch changed"
    assert close(a[0], alone[0], atol=1e-5), "sentence 0 alone gives other logits than sentence 0 in a batch"
