from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 6

@test_case(points=1, hidden=False, 
    failure_message="For q, k, v of shape (5, 8) Attention must return out of shape (5, 8) and weights of shape (5, 5) whose rows add up to one.")
def test_one_sentence(Attention):
    import torch
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 8)
    out, weights = Attention(q, k, v)
    assert tuple(out.shape) == (5, 8), f'out has shape {tuple(out.shape)}, expected (5, 8)'
    assert tuple(weights.shape) == (5, 5), f'weights has shape {tuple(weights.shape)}, expected (5, 5)'
    assert torch.allclose(weights.sum(dim=-1), torch.ones(5), atol=1e-05), 'the rows of the weights do not add up to one'

@test_case(points=1, hidden=True, 
    failure_message="For random sizes, every row of your weights should be a probability distribution (no negative entries, adding up to one). Is the softmax over the last index (j)?")
def test_rows_are_probabilities(Attention):
    import torch
    torch.manual_seed(1)
    for L, d, dv in [(7, 3, 5), (2, 16, 4), (11, 6, 6)]:
        q, k = 2 * torch.randn(2, L, d)
        v = torch.randn(L, dv)
        out, weights = Attention(q, k, v)
        assert tuple(weights.shape) == (L, L)
        assert tuple(out.shape) == (L, dv)
        assert (weights >= 0).all()
        assert torch.allclose(weights.sum(dim=-1), torch.ones(L), atol=1e-05)

@test_case(points=1, hidden=True, 
    failure_message="For one sentence of random size your output or weights differ from softmax(q k^T / sqrt(d)) and F.scaled_dot_product_attention. Check the scale (d is the length of the query vectors, q.shape[-1]), the sign of the energy, and that the output is weights @ v.")
def test_values_one_sentence(Attention):
    import math
    import torch
    import torch.nn.functional as F
    torch.manual_seed(2)
    for L, d, dv in [(6, 4, 4), (3, 9, 9), (9, 16, 5)]:
        q, k = 1.5 * torch.randn(2, L, d)
        v = torch.randn(L, dv)
        w_ref = torch.softmax(q @ k.T / math.sqrt(d), dim=-1)
        out, weights = Attention(q, k, v)
        assert torch.allclose(weights, w_ref, atol=1e-05), 'weights differ'
        assert torch.allclose(out, w_ref @ v, atol=1e-05), 'out differs'
        assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-05), 'differs from pytorch'

@test_case(points=1, hidden=True, 
    failure_message="Your Attention does not work on a batch. For q, k, v of shape (batch, L, d) it should return out (batch, L, d) and weights (batch, L, L), each sentence on its own. Use -2 and -1 for the indices (k.transpose(-2, -1), softmax over dim=-1), not .T or 0 and 1.")
def test_batched(Attention):
    import math
    import torch
    import torch.nn.functional as F
    torch.manual_seed(3)
    for shape, dv in [((64, 5, 8), 8), ((3, 7, 4), 6), ((2, 3, 6, 5), 5)]:
        q, k = torch.randn(2, *shape)
        v = torch.randn(*shape[:-1], dv)
        out, weights = Attention(q, k, v)
        L = shape[-2]
        assert tuple(out.shape) == (*shape[:-1], dv), 'wrong output shape'
        assert tuple(weights.shape) == (*shape[:-1], L), 'wrong weights shape'
        w_ref = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(shape[-1]), dim=-1)
        assert torch.allclose(weights, w_ref, atol=1e-05), 'weights differ'
        assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-05), 'out differs'

@test_case(points=1, hidden=True, 
    failure_message="Gradients do not flow through your Attention as they should. Don't detach anything (and don't use torch.no_grad) inside Attention, or Q, K and V can never be trained.")
def test_gradients(Attention):
    import math
    import torch
    torch.manual_seed(4)
    q0, k0, v0 = torch.randn(3, 6, 5)
    r = torch.randn(6, 5)
    mine = [t.clone().requires_grad_() for t in (q0, k0, v0)]
    ref = [t.clone().requires_grad_() for t in (q0, k0, v0)]
    out, weights = Attention(*mine)
    (out * r).sum().backward()
    w = torch.softmax(ref[0] @ ref[1].T / math.sqrt(5), dim=-1)
    (w @ ref[2] * r).sum().backward()
    for a, b in zip(mine, ref):
        assert a.grad is not None, 'no gradient'
        assert torch.allclose(a.grad, b.grad, atol=1e-05), 'wrong gradient'

@test_case(points=1, hidden=True, 
    failure_message="Either your Attention does not run yet, or it uses one of the pieces the rules forbid (F.scaled_dot_product_attention, nn.MultiheadAttention or nn.Transformer...). Build it from @, transpose and softmax.")
def test_rules(Attention):
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
    torch.manual_seed(5)
    q, k, v = torch.randn(3, 2, 5, 8)
    with Watch():
        for args in [(q, k, v), (q[0], k[0], v[0])]:
            Attention(*args)
    assert not Watch.used, f'used {sorted(Watch.used)}'

