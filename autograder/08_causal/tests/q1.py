from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 12

@test_case(points=1, hidden=False, 
    failure_message="Attention(q, k, v, causal=True) should give weights that are zero above the diagonal and whose rows add up to one.")
def test_causal_attention_basic(Attention):
    import torch
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 5, 8)
    out, w = Attention(q, k, v, causal=True)
    assert tuple(out.shape) == (5, 8) and tuple(w.shape) == (5, 5), 'Attention(q, k, v, causal=True) should return out (5, 8) and weights (5, 5)'
    assert not torch.isnan(w).any(), 'your causal weights contain NaN: is the diagonal (j = i) still allowed?'
    assert torch.allclose(w.sum(-1), torch.ones(5), atol=1e-05), 'the rows of your causal weights should still add up to one'
    assert torch.all(w.triu(1) == 0), 'with causal=True the weights above the diagonal (j > i) should be exactly zero'

@test_case(points=2, hidden=True, 
    failure_message="Your Attention with causal=True should set the energies with j > i to infinity (the dot products to -inf) before the softmax, keep the diagonal, and still divide by sqrt(d); with causal=False (the default) nothing changes.")
def test_causal_attention_values(Attention):
    import math, torch
    torch.manual_seed(1)
    for shape in [(6, 4), (2, 7, 8), (2, 3, 5, 6)]:
        q, k, v = (torch.randn(*shape) for _ in range(3))
        q = 3 * q
        L, d = (shape[-2], shape[-1])
        dots = q @ k.transpose(-2, -1) / math.sqrt(d)
        plain = torch.softmax(dots, dim=-1)
        future = torch.ones(L, L, dtype=torch.bool).triu(1)
        masked = torch.softmax(dots.masked_fill(future, -math.inf), dim=-1)
        for causal, want_w in [(False, plain), (True, masked)]:
            out, w = Attention(q, k, v, causal=causal)
            assert w.shape == want_w.shape, f'weights of shape {tuple(w.shape)} for inputs of shape {shape}'
            assert torch.allclose(w, want_w, atol=1e-05), f'with causal={causal} your weights are not the Boltzmann weights exp(q_i . k_j / sqrt(d)) over the allowed j (all j, or j <= i when causal)'
            assert torch.allclose(out, want_w @ v, atol=1e-05), f'with causal={causal} your output is not weights @ v'
        out, w = Attention(q, k, v)
        assert torch.allclose(w, plain, atol=1e-05), 'Attention(q, k, v) without causal should work exactly as before (causal=False by default)'

@test_case(points=1.5, hidden=True, 
    failure_message="Head(dim, head_dim, causal=True) should be causal: save causal as self.causal in __init__ and pass it to Attention in forward; without it, nothing changes.")
def test_causal_head(Head):
    import math, torch
    torch.manual_seed(2)
    for causal in (True, False):
        head = Head(12, 4, causal=causal)
        with torch.no_grad():
            head.Q.weight.mul_(3)
        x = torch.randn(2, 6, 12)
        q, k, v = (x @ head.Q.weight.T, x @ head.K.weight.T, x @ head.V.weight.T)
        dots = q @ k.transpose(-2, -1) / 2.0
        if causal:
            dots = dots.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), -math.inf)
        w = torch.softmax(dots, dim=-1)
        out = head(x)
        assert torch.allclose(out, w @ v, atol=0.0001), f'Head(12, 4, causal={causal}) does not give the right output: is causal saved as self.causal and passed to Attention?'
        assert torch.allclose(head.weights, w, atol=1e-05), f'Head(12, 4, causal={causal}) does not keep the right weights in self.weights'
        assert not head.weights.requires_grad, 'the saved weights should be detached'
    head = Head(12, 4)
    head(torch.randn(6, 12))
    assert (head.weights.triu(1) != 0).any(), 'Head(dim, head_dim) without causal should not be causal (causal=False by default)'

@test_case(points=1.5, hidden=True, 
    failure_message="MultiHead(dim, heads, causal=True) should pass causal on to every one of its heads.")
def test_causal_multihead(MultiHead):
    import torch
    torch.manual_seed(3)
    multi = MultiHead(12, 3, causal=True)
    x = torch.randn(2, 6, 12)
    out = multi(x)
    assert len(multi.heads) == 3
    for h in multi.heads:
        assert torch.all(h.weights.triu(1) == 0), 'with MultiHead(dim, heads, causal=True) every head should be causal: pass causal on to each Head'
    y = x.clone()
    y[:, 4:] = torch.randn(2, 2, 12)
    assert torch.allclose(multi(y)[:, :4], out[:, :4], atol=1e-05), 'MultiHead(..., causal=True): changing sites 4 and 5 changed the output at earlier sites'
    plain = MultiHead(12, 3)
    plain(x)
    assert (plain.heads[0].weights.triu(1) != 0).any(), 'MultiHead(dim, heads) without causal should not be causal'

@test_case(points=1.5, hidden=True, 
    failure_message="Block(dim, heads, causal=True) should pass causal on to its MultiHead: then the output at site i cannot depend on sites after i.")
def test_causal_block(Block):
    import torch
    torch.manual_seed(4)
    block = Block(12, 3, causal=True)
    x = torch.randn(2, 7, 12)
    with torch.no_grad():
        out = block(x)
        for i in range(6):
            y = x.clone()
            y[:, i + 1:] = torch.randn(2, 6 - i, 12)
            assert torch.allclose(block(y)[:, :i + 1], out[:, :i + 1], atol=1e-05), 'Block(dim, heads, causal=True): changing later sites changed the output at earlier sites; pass causal on to MultiHead'
        plain = Block(12, 3)
        y = x.clone()
        y[:, -1] = torch.randn(2, 12)
        assert not torch.allclose(plain(y)[:, 0], plain(x)[:, 0], atol=1e-06), 'Block(dim, heads) without causal should let every site hear every other site'

@test_case(points=2, hidden=True, 
    failure_message="MyTransformer(..., causal=True) should pass causal down through every Block: then the logits at position i do not change when later tokens change. Without causal (the default) every position hears every other.")
def test_causal_mytransformer(MyTransformer):
    import torch

    def perturb(net):
        import math, torch, torch.nn as nn
        with torch.no_grad():
            for m in net.modules():
                if isinstance(m, nn.LayerNorm):
                    m.weight.copy_(1 + 0.5 * torch.randn_like(m.weight))
                    m.bias.copy_(0.5 * torch.randn_like(m.bias))
                elif isinstance(m, nn.Linear):
                    m.weight.normal_(0, 2 / math.sqrt(m.in_features))
                elif isinstance(m, nn.Embedding):
                    m.weight.normal_(0, 1)
    torch.manual_seed(5)
    net = MyTransformer(11, dim=12, heads=3, layers=3, causal=True)
    perturb(net)
    x = torch.randint(11, (2, 8))
    with torch.no_grad():
        out = net(x)
        assert not torch.isnan(out).any(), 'your causal network gives NaN'
        for i in range(7):
            y = x.clone()
            y[:, i + 1:] = torch.randint(11, (2, 7 - i))
            assert torch.allclose(net(y)[:, :i + 1], out[:, :i + 1], atol=0.0001), f'MyTransformer(..., causal=True): changing the tokens after position {i} changed the logits at position {i} or before'
        plain = MyTransformer(11, dim=12, heads=3, layers=3)
        perturb(plain)
        y = x.clone()
        y[:, -1] = (x[:, -1] + 1) % 11
        a, b = (plain(x), plain(y))
        for i in range(8):
            assert not torch.allclose(a[:, i], b[:, i], atol=1e-06), f'MyTransformer without causal (the default): changing the last token should change the logits at every position, but position {i} did not change'

@test_case(points=1, hidden=True, 
    failure_message="In a causal network the output at position i must not depend at all (zero derivative) on the input at positions after i.")
def test_causal_gradient(MyTransformer):
    import torch

    def perturb(net):
        import math, torch, torch.nn as nn
        with torch.no_grad():
            for m in net.modules():
                if isinstance(m, nn.LayerNorm):
                    m.weight.copy_(1 + 0.5 * torch.randn_like(m.weight))
                    m.bias.copy_(0.5 * torch.randn_like(m.bias))
                elif isinstance(m, nn.Linear):
                    m.weight.normal_(0, 2 / math.sqrt(m.in_features))
                elif isinstance(m, nn.Embedding):
                    m.weight.normal_(0, 1)
    torch.manual_seed(6)
    net = MyTransformer(9, dim=8, heads=2, layers=2, causal=True)
    perturb(net)
    store = {}

    def keep(module, inputs, output):
        output.retain_grad()
        store['e'] = output
    hook = net.embed.register_forward_hook(keep)
    try:
        logits = net(torch.randint(9, (1, 6)))
    finally:
        hook.remove()
    logits[0, 2].sum().backward()
    g = store['e'].grad[0]
    assert g[3:].abs().max() == 0, 'the logits at position 2 have a nonzero derivative with respect to the tokens at positions 3, 4, 5: your network is not causal'
    assert g[:3].abs().max() > 0, 'the logits at position 2 should depend on the tokens at positions 0, 1, 2'

@test_case(points=1, hidden=True, 
    failure_message="The causal switch adds no parameters, and the mask must be made on the same device as q (device=q.device).")
def test_causal_count_and_device(MyTransformer):
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves
    got = sum((p.numel() for p in MyTransformer(2002, causal=True).parameters()))
    assert got == 1314514, f'a causal MyTransformer(2002) should have the same 1,314,514 parameters as before (the switch adds none); yours has {got:,}'

    class OneDevice(TorchDispatchMode):

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            devices = {t.device.type for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and t.dim() > 0}
            if len(devices) > 1:
                raise AssertionError('two devices')
            return func(*args, **kwargs)
    net = MyTransformer(9, dim=8, heads=2, layers=2, causal=True).to('meta')
    try:
        with OneDevice():
            net(torch.zeros(2, 5, dtype=torch.long, device='meta'))
        ok = True
    except AssertionError:
        ok = False
    assert ok, 'with the network on another device your causal network makes a tensor on the CPU: make the mask with device=q.device (and the positions with device=x.device)'

@test_case(points=0.5, hidden=True, 
    failure_message="The rules: the causal mask is yours to write; F.scaled_dot_product_attention(is_causal=True), nn.MultiheadAttention and nn.Transformer... are not allowed.")
def test_causal_rules(MyTransformer, Attention):
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
        Attention(*torch.randn(3, 4, 6), causal=True)
        net = MyTransformer(9, dim=8, heads=2, layers=2, causal=True)
        net(torch.randint(9, (2, 5)))
        ok = True
    except AssertionError:
        ok = False
    finally:
        F.scaled_dot_product_attention = real_sdpa
        for n, v in real.items():
            setattr(nn, n, v)
    assert ok, 'your code uses nn.MultiheadAttention, nn.Transformer... or F.scaled_dot_product_attention (e.g. with is_causal=True), which the rules forbid'
    assert not any((v is real_sdpa or v is real['MultiheadAttention'] for v in Attention.__globals__.values())), 'your notebook imports F.scaled_dot_product_attention or nn.MultiheadAttention under another name'

