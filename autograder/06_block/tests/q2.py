from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = 9

@test_case(points=1, hidden=False, 
    failure_message="block = Block(32, 4) should turn a (64, 5, 32) batch into a (64, 5, 32) batch.")
def test_block_shape(Block):
    import torch
    torch.manual_seed(0)
    block = Block(32, 4)
    out = block(torch.randn(64, 5, 32))
    assert tuple(out.shape) == (64, 5, 32), f'Block(32, 4) on a (64, 5, 32) batch should give (64, 5, 32), yours gives {tuple(out.shape)}'

@test_case(points=1, hidden=True, 
    failure_message="Block should keep the shape of its input, for any dim, heads, batch size and length, and for one sentence of shape (L, dim).")
def test_block_shapes_random(Block):
    import torch
    torch.manual_seed(1)
    for dim, heads, batch, L in [(12, 3, 2, 7), (8, 1, 3, 4), (20, 5, 1, 9), (6, 2, 4, 1)]:
        block = Block(dim, heads)
        out = block(torch.randn(batch, L, dim))
        assert tuple(out.shape) == (batch, L, dim), f'Block({dim}, {heads}) on a batch of shape {(batch, L, dim)} gave {tuple(out.shape)}'
        out = block(torch.randn(L, dim))
        assert tuple(out.shape) == (L, dim), f'Block({dim}, {heads}) on one sentence of shape {(L, dim)} gave {tuple(out.shape)}'

@test_case(points=1, hidden=True, 
    failure_message="Your Block has the wrong number of parameters: two separate nn.LayerNorm(dim), one MultiHead(dim, heads), and an mlp dim -> 4*dim -> dim with biases.")
def test_block_parameter_count(Block):
    for dim, heads in [(32, 4), (12, 3), (10, 2), (9, 1), (24, 6)]:
        block = Block(dim, heads)
        got = sum((p.numel() for p in block.parameters()))
        norms = 2 * 2 * dim
        attention = 3 * dim * dim + dim * dim + dim
        mlp = dim * 4 * dim + 4 * dim + 4 * dim * dim + dim
        want = norms + attention + mlp
        assert got == want, f'Block({dim}, {heads}) should have {want} parameters (two norms: {norms}, MultiHead: {attention}, mlp: {mlp}); yours has {got}'

@test_case(points=1, hidden=True, 
    failure_message="You need two different nn.LayerNorm(dim), norm1 and norm2: each has its own trainable scale and shift.")
def test_block_separate_norms(Block):
    import torch.nn as nn
    block = Block(16, 2)
    assert isinstance(block.norm1, nn.LayerNorm) and isinstance(block.norm2, nn.LayerNorm), 'norm1 and norm2 should be nn.LayerNorm(dim)'
    assert block.norm1 is not block.norm2 and block.norm1.weight is not block.norm2.weight, 'norm1 and norm2 are the same LayerNorm: make two, each has its own scale and shift'
    assert tuple(block.norm1.weight.shape) == (16,), 'norm1 should be nn.LayerNorm(dim)'

@test_case(points=3, hidden=True, 
    failure_message="Your Block does not compute x + attention(norm1(x)) and then x + mlp(norm2(x)): check that the norm comes before (not after) each piece, that both residual additions are there, that norm1 and norm2 are each used once in their place, and that the mlp uses nn.GELU.")
def test_block_values(Block):
    import math, torch, torch.nn as nn, torch.nn.functional as F
    torch.manual_seed(2)

    def layer_norm(m, h):
        return F.layer_norm(h, (h.shape[-1],), m.weight, m.bias, getattr(m, 'eps', 1e-05))
    for dim, heads, batch, L in [(12, 3, 2, 6), (16, 4, 3, 5), (8, 1, 1, 7)]:
        block = Block(dim, heads)
        linears = [m for m in block.mlp.modules() if isinstance(m, nn.Linear)]
        assert len(linears) == 2, 'the mlp should be two nn.Linear layers with a GELU between them'
        up, down = linears
        assert tuple(up.weight.shape) == (4 * dim, dim) and tuple(down.weight.shape) == (dim, 4 * dim), 'the mlp should go from dim to 4 * dim and back to dim'
        with torch.no_grad():
            for m in (block.norm1, block.norm2):
                m.weight.copy_(1 + 0.5 * torch.randn(dim))
                m.bias.copy_(0.5 * torch.randn(dim))
            up.weight.mul_(3)
            up.bias.normal_(0, 0.5)
        x = 2 * torch.randn(batch, L, dim) + 1
        with torch.no_grad():
            h = x + block.attention(layer_norm(block.norm1, x))
            u = layer_norm(block.norm2, h) @ up.weight.T + up.bias
            want = h + F.gelu(u) @ down.weight.T + down.bias
            got = block(x)
        assert got.shape == want.shape, f'Block({dim}, {heads}) gave shape {tuple(got.shape)}'
        assert torch.allclose(got, want, atol=0.0001, rtol=0.0001), f'Block({dim}, {heads}) does not compute x = x + attention(norm1(x)), then x = x + mlp(norm2(x)) with a GELU mlp'

@test_case(points=0.5, hidden=True, 
    failure_message="Shuffling the sites of the input should only shuffle the output of Block in the same way.")
def test_block_permutation(Block):
    import torch
    torch.manual_seed(3)
    block = Block(12, 3)
    x = torch.randn(2, 6, 12)
    perm = torch.randperm(6)
    with torch.no_grad():
        out = block(x)
        assert torch.allclose(block(x[:, perm]), out[:, perm], atol=1e-05), 'reordering the sites should just reorder the output of Block'

@test_case(points=1, hidden=True, 
    failure_message="Each sentence's output must depend only on that sentence, not on the other sentences of the batch: normalise over the last index of each site only.")
def test_block_batch_independence(Block):
    import torch
    torch.manual_seed(5)
    block = Block(12, 3)
    x = torch.randn(4, 5, 12)
    other = x.clone()
    other[1:] = 5 * torch.randn(3, 5, 12) - 2
    with torch.no_grad():
        assert torch.allclose(block(x)[0], block(other)[0], atol=1e-05), 'the output for sentence 0 changed when the other sentences of the batch changed'
        assert torch.allclose(block(x)[0], block(x[0]), atol=1e-05), 'one sentence on its own should give the same output as in a batch'

@test_case(points=0.5, hidden=True, 
    failure_message="Your Block does not run yet, or breaks the rules: build Block from your own MultiHead; nn.MultiheadAttention, nn.TransformerEncoderLayer and friends, and F.scaled_dot_product_attention are not allowed.")
def test_block_rules(Block):
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
        block = Block(12, 3)
        out = block(torch.randn(2, 5, 12))
        ok = True
    except AssertionError:
        ok = False
    finally:
        F.scaled_dot_product_attention = real_sdpa
        for n, v in real.items():
            setattr(nn, n, v)
    assert isinstance(out, torch.Tensor) and out.shape == (2, 5, 12), 'your Block does not run yet, so the rules cannot be checked'
    assert ok, 'your Block uses nn.MultiheadAttention, nn.Transformer... or F.scaled_dot_product_attention, which the rules forbid'
    assert not any((isinstance(m, tuple(real.values())) for m in block.modules())), "your Block contains one of PyTorch's ready-made attention or transformer modules"

