from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 9

@test_case(points=1, hidden=False, 
    failure_message="For head = Head(32, 8) and x of shape (64, 5, 32), head(x) should have shape (64, 5, 8) and head.weights shape (64, 5, 5).")
def test_page_shapes(Head):
    import torch
    torch.manual_seed(0)
    head = Head(32, 8)
    out = head(torch.randn(64, 5, 32))
    assert tuple(out.shape) == (64, 5, 8), f'head(x) has shape {tuple(out.shape)}'
    assert tuple(head.weights.shape) == (64, 5, 5), f'head.weights has shape {tuple(head.weights.shape)}'

@test_case(points=1, hidden=True, 
    failure_message="Your Head gives the wrong shapes for other sizes. For Head(dim, head_dim), x of shape (batch, L, dim) or (L, dim) must give an output (batch, L, head_dim) or (L, head_dim), and head.weights (batch, L, L) or (L, L).")
def test_random_shapes(Head):
    import torch
    torch.manual_seed(1)
    for dim, head_dim, batch, L in [(12, 3, 7, 9), (6, 10, 2, 4), (20, 5, 1, 13)]:
        head = Head(dim, head_dim)
        out = head(torch.randn(batch, L, dim))
        assert tuple(out.shape) == (batch, L, head_dim) and tuple(head.weights.shape) == (batch, L, L)
        out = head(torch.randn(L, dim))
        assert tuple(out.shape) == (L, head_dim) and tuple(head.weights.shape) == (L, L)

@test_case(points=1, hidden=True, 
    failure_message="Head(dim, head_dim) should have exactly 3 * dim * head_dim trainable numbers: self.Q, self.K and self.V are each nn.Linear(dim, head_dim, bias=False) (no biases, nothing else).")
def test_parameter_count(Head):
    import torch
    for dim, head_dim in [(32, 8), (10, 7), (5, 16)]:
        head = Head(dim, head_dim)
        assert sum((p.numel() for p in head.parameters())) == 3 * dim * head_dim, 'wrong count'
        for name in ('Q', 'K', 'V'):
            layer = getattr(head, name)
            assert isinstance(layer, torch.nn.Linear) and layer.bias is None, f'{name} not a Linear without bias'
            assert tuple(layer.weight.shape) == (head_dim, dim), f'{name} has the wrong shape'

@test_case(points=2, hidden=True, 
    failure_message="Your Head's output or weights differ from what its own Q, K and V give: queries from self.Q, keys from self.K, values from self.V, energies q_i . k_j divided by the square root of head_dim (the length of the queries, not dim), softmax over j, output = weights @ values.")
def test_values(Head):
    import math
    import torch
    torch.manual_seed(2)
    for dim, head_dim, shape in [(12, 4, (3, 6)), (8, 16, (5,)), (24, 6, (2, 2, 7))]:
        head = Head(dim, head_dim)
        with torch.no_grad():
            for layer in (head.Q, head.K, head.V):
                layer.weight.copy_(torch.randn(head_dim, dim) / math.sqrt(dim) * 1.5)
        x = torch.randn(*shape, dim)
        with torch.no_grad():
            out = head(x)
        q, k, v = (x @ layer.weight.T for layer in (head.Q, head.K, head.V))
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(head_dim), dim=-1)
        assert torch.allclose(head.weights, w, atol=1e-05), 'weights differ'
        assert torch.allclose(out, w @ v, atol=1e-05), 'output differs'

@test_case(points=1, hidden=True, 
    failure_message="After a call, head.weights should be a detached copy of the weights (weights.detach(): it must not require gradients) and each of its rows should add up to one.")
def test_weights_detached(Head):
    import torch
    torch.manual_seed(3)
    head = Head(16, 4)
    head(torch.randn(3, 6, 16))
    assert isinstance(head.weights, torch.Tensor), 'head.weights is not a tensor'
    assert not head.weights.requires_grad, 'head.weights requires grad'
    assert torch.allclose(head.weights.sum(dim=-1), torch.ones(3, 6), atol=1e-05), "rows don't add to one"
    assert (head.weights >= 0).all()

@test_case(points=1, hidden=True, 
    failure_message="Training must be able to reach Q, K and V: the gradients of the output with respect to their matrices are missing or wrong. Don't detach the output or compute it under torch.no_grad; only the saved copy self.weights is detached.")
def test_gradients(Head):
    import math
    import torch
    torch.manual_seed(4)
    dim, head_dim = (10, 6)
    head = Head(dim, head_dim)
    x = torch.randn(2, 5, dim)
    r = torch.randn(2, 5, head_dim)
    (head(x) * r).sum().backward()
    Wq, Wk, Wv = (layer.weight.detach().clone().requires_grad_() for layer in (head.Q, head.K, head.V))
    w = torch.softmax(x @ Wq.T @ (x @ Wk.T).transpose(-2, -1) / math.sqrt(head_dim), dim=-1)
    (w @ (x @ Wv.T) * r).sum().backward()
    for layer, ref in zip((head.Q, head.K, head.V), (Wq, Wk, Wv)):
        assert layer.weight.grad is not None, 'no gradient'
        assert torch.allclose(layer.weight.grad, ref.grad, atol=0.0001), 'wrong gradient'

@test_case(points=1, hidden=True, 
    failure_message="A head, like Attention, should not care about the order of the sites: shuffling the sites of x should shuffle the rows of the output (and the rows and columns of head.weights) the same way.")
def test_permutation(Head):
    import torch
    torch.manual_seed(5)
    head = Head(12, 4)
    x = torch.randn(3, 7, 12)
    perm = torch.randperm(7)
    with torch.no_grad():
        out = head(x)
        w = head.weights.clone()
        out2 = head(x[:, perm])
        w2 = head.weights.clone()
    assert torch.allclose(out2, out[:, perm], atol=1e-05)
    assert torch.allclose(w2, w[:, perm][:, :, perm], atol=1e-05)

@test_case(points=1, hidden=True, 
    failure_message="Either your Head does not run yet, or it uses one of the pieces the rules forbid (nn.MultiheadAttention, nn.Transformer... or F.scaled_dot_product_attention). Build it from nn.Linear and your Attention.")
def test_rules(Head):
    import torch
    from torch.overrides import TorchFunctionMode
    forbidden = ('scaled_dot_product_attention', 'multi_head_attention_forward')

    class Watch(TorchFunctionMode):
        used = set()

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, '__name__', '')
            if name in forbidden or 'transformer' in name.lower():
                Watch.used.add(name)
            return func(*args, **kwargs or {})
    torch.manual_seed(6)
    head = Head(16, 8)
    for m in head.modules():
        assert not isinstance(m, torch.nn.MultiheadAttention), 'nn.MultiheadAttention'
        assert 'Transformer' not in type(m).__name__, 'nn.Transformer'
    with Watch():
        for x in (torch.randn(2, 5, 16), torch.randn(5, 16)):
            out = head(x)
            assert isinstance(out, torch.Tensor) and out.shape == (*x.shape[:-1], 8), 'does not run yet'
    assert not Watch.used, f'used {sorted(Watch.used)}'

