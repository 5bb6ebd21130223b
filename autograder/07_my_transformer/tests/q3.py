from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = 1

@test_case(points=0.5, hidden=False, 
    failure_message="Compare net(x)[0] for two batches with the same first sentence: torch.allclose should say True.")
def test_first_unchanged_answer(first_unchanged):
    assert first_unchanged is True, 'first_unchanged should be True: the logits of the first sentence should not change when the other sentences do'

@test_case(points=0.5, hidden=True, 
    failure_message="One sentence's logits must not depend on the other sentences of the batch.")
def test_batch_independence(MyTransformer):
    import torch
    torch.manual_seed(5)
    net = MyTransformer(10, dim=12, heads=3, layers=2)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.3 * torch.randn_like(p))
        x = torch.randint(10, (5, 7))
        other = torch.randint(10, (5, 7))
        other[0] = x[0]
        assert torch.allclose(net(x)[0], net(other)[0], atol=1e-05), 'the logits of sentence 0 changed when only the other sentences of the batch changed'
        assert torch.allclose(net(x)[0], net(x[:1])[0], atol=1e-05), 'sentence 0 alone gives other logits than sentence 0 in a batch'

