from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 8

@test_case(points=1, hidden=False, 
    failure_message="multi = MultiHead(32, 4) should turn a (64, 5, 32) batch into a (64, 5, 32) batch.")
def test_multihead_shape(MultiHead):
    import torch
    torch.manual_seed(0)
    multi = MultiHead(32, 4)
    out = multi(torch.randn(64, 5, 32))
    assert tuple(out.shape) == (64, 5, 32), f'MultiHead(32, 4) on a (64, 5, 32) batch should give (64, 5, 32), yours gives {tuple(out.shape)}'

@test_case(points=1, hidden=True, 
    failure_message="MultiHead should keep the shape of its input, for any dim, heads, batch and length, and also for one sentence of shape (L, dim).")
def test_multihead_shapes_random(MultiHead):
    import torch
    torch.manual_seed(1)
    for dim, heads, batch, L in [(12, 3, 2, 7), (8, 1, 3, 4), (20, 5, 1, 9), (6, 2, 5, 1)]:
        multi = MultiHead(dim, heads)
        out = multi(torch.randn(batch, L, dim))
        assert tuple(out.shape) == (batch, L, dim), f'MultiHead({dim}, {heads}) on a batch of shape {(batch, L, dim)} gave {tuple(out.shape)}'
        out = multi(torch.randn(L, dim))
        assert tuple(out.shape) == (L, dim), f'MultiHead({dim}, {heads}) on one sentence of shape {(L, dim)} gave {tuple(out.shape)}: does your torch.cat use dim=-1?'

@test_case(points=1, hidden=True, 
    failure_message="The number of parameters of your MultiHead is wrong: every head needs its own Q, K, V of size (dim // heads) x dim, stored in an nn.ModuleList, plus mix = nn.Linear(dim, dim).")
def test_multihead_parameter_count(MultiHead):
    import torch
    for dim, heads in [(32, 4), (12, 3), (10, 2), (9, 1), (24, 6)]:
        multi = MultiHead(dim, heads)
        got = sum((p.numel() for p in multi.parameters()))
        want = heads * 3 * dim * (dim // heads) + dim * dim + dim
        assert got == want, f'MultiHead({dim}, {heads}) should have {want} trainable numbers ({heads} heads of 3 matrices of {dim // heads} x {dim}, and mix with its bias), yours has {got}'

@test_case(points=1, hidden=True, 
    failure_message="self.heads must be an nn.ModuleList of separate Head(dim, dim // heads), one new Head for each.")
def test_multihead_separate_registered_heads(MultiHead):
    import torch, torch.nn as nn
    multi = MultiHead(12, 3)
    assert isinstance(multi.heads, nn.ModuleList), 'self.heads should be an nn.ModuleList, so that PyTorch finds the heads'
    assert len(multi.heads) == 3, f'MultiHead(12, 3) should have 3 heads, yours has {len(multi.heads)}'
    assert len({id(h) for h in multi.heads}) == 3, 'your heads are all the same head: make a new Head for each one (a list comprehension, not [Head(...)] * heads)'
    for h in multi.heads:
        assert tuple(h.Q.weight.shape) == (4, 12), f'each head of MultiHead(12, 3) should be a Head(12, 4), a query matrix of shape (4, 12); yours is {tuple(h.Q.weight.shape)}'
    names = {n for n, _ in multi.named_parameters()}
    assert any((n.startswith('heads.2.') for n in names)), 'PyTorch does not see the matrices of your heads among the parameters'
    assert isinstance(multi.mix, nn.Linear) and tuple(multi.mix.weight.shape) == (12, 12), 'self.mix should be nn.Linear(dim, dim)'

@test_case(points=2, hidden=True, 
    failure_message="Your MultiHead does not compute self.mix(torch.cat([head(x) for head in self.heads], dim=-1)): check that every head gets the same x, that the outputs are glued along the last index in order, and that mix is applied.")
def test_multihead_values(MultiHead):
    import math, torch
    torch.manual_seed(2)
    for dim, heads, batch, L in [(12, 3, 2, 6), (16, 4, 3, 5), (10, 2, 1, 7), (8, 1, 2, 4)]:
        multi = MultiHead(dim, heads)
        with torch.no_grad():
            for p in multi.parameters():
                p.normal_(0, 1 / math.sqrt(dim))
            for h in multi.heads:
                h.Q.weight.mul_(3)
            multi.mix.bias.normal_(0, 1)
        x = torch.randn(batch, L, dim)
        hd = dim // heads
        outs, weights = ([], [])
        for h in multi.heads:
            q, k, v = (x @ h.Q.weight.T, x @ h.K.weight.T, x @ h.V.weight.T)
            w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(hd), dim=-1)
            outs.append(w @ v)
            weights.append(w)
        want = torch.cat(outs, dim=-1) @ multi.mix.weight.T + multi.mix.bias
        got = multi(x)
        assert got.shape == want.shape, f'MultiHead({dim}, {heads}) gave shape {tuple(got.shape)}, expected {tuple(want.shape)}'
        assert torch.allclose(got, want, atol=0.0001, rtol=0.0001), f"MultiHead({dim}, {heads}) does not give every head's output glued side by side (in order, along the last index) and then mixed by self.mix"
        for h, w in zip(multi.heads, weights):
            assert torch.allclose(h.weights, w, atol=1e-05), "after a call, each head's .weights should hold that head's attention weights for this input"

@test_case(points=1, hidden=True, 
    failure_message="Shuffling the sites of the input should only shuffle the output of MultiHead in the same way (like Attention).")
def test_multihead_permutation(MultiHead):
    import torch
    torch.manual_seed(3)
    multi = MultiHead(12, 3)
    x = torch.randn(2, 6, 12)
    perm = torch.randperm(6)
    out = multi(x)
    assert torch.allclose(multi(x[:, perm]), out[:, perm], atol=1e-05), 'reordering the sites should just reorder the output of MultiHead'

@test_case(points=1, hidden=True, 
    failure_message="Your MultiHead does not run yet, or breaks the rules: build MultiHead from your own heads; nn.MultiheadAttention, nn.Transformer... and F.scaled_dot_product_attention are not allowed.")
def test_multihead_rules(MultiHead):
    import torch, torch.nn as nn, torch.nn.functional as F
    names = ['MultiheadAttention', 'Transformer', 'TransformerEncoder', 'TransformerEncoderLayer', 'TransformerDecoder', 'TransformerDecoderLayer']
    real = {n: getattr(nn, n) for n in names}
    real_sdpa = F.scaled_dot_product_attention

    def forbidden(*args, **kwargs):
        raise AssertionError('forbidden')
    try:
        F.scaled_dot_product_attention = forbidden
        for n in names:
            setattr(nn, n, forbidden)
        multi = MultiHead(12, 3)
        out = multi(torch.randn(2, 5, 12))
        ok = True
    except AssertionError:
        ok = False
    finally:
        F.scaled_dot_product_attention = real_sdpa
        for n, v in real.items():
            setattr(nn, n, v)
    assert isinstance(out, torch.Tensor) and out.shape == (2, 5, 12), 'your MultiHead does not run yet, so the rules cannot be checked'
    assert ok, 'your MultiHead uses nn.MultiheadAttention, nn.Transformer... or F.scaled_dot_product_attention, which the rules forbid'
    assert not any((isinstance(m, tuple(real.values())) for m in multi.modules())), "your MultiHead contains one of PyTorch's ready-made attention modules, which the rules forbid"
    assert not any((v is real_sdpa or v is real['MultiheadAttention'] for v in MultiHead.forward.__globals__.values())), 'your notebook imports F.scaled_dot_product_attention or nn.MultiheadAttention under another name: the rules forbid them'

