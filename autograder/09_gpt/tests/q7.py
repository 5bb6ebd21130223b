from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = 4

@test_case(points=1, hidden=False, 
    failure_message="Same as PyTorch: False. Usually a mistake in dividing by sqrt(d), where d = dim // heads is the width of ONE head, or in splitting qkv into q, k, v (in that order) and into heads (view(B, T, H, d).transpose(1, 2), and back). RuntimeError: view size is not compatible: you forgot .contiguous() before the last view.")
def test_same_as_pytorch(Config, SelfAttention):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

    def hears(attn, x):
        """Your attention's output, and allowed[i, j]: does output site i change when input site j
        changes? (The mask as your attention applies it, whatever it is.)"""
        base = attn(x)
        T = x.shape[1]
        allowed = torch.zeros(T, T, dtype=torch.bool)
        for j in range(T):
            moved = x.clone()
            moved[:, j] += torch.randn(x.shape[0], x.shape[2], dtype=x.dtype)
            allowed[:, j] = (attn(moved) - base).abs().amax(dim=(0, 2)) > 1e-09
        return (base, allowed)
    Config, SelfAttention = (student(Config), student(SelfAttention))
    torch.manual_seed(0)
    attn = SelfAttention(Config(vocab_size=1024, dropout=0.0)).eval()
    P = attn.params()
    x = torch.randn(2, 16, 128)
    out, allowed = hears(attn, x)
    q, k, v = (x @ P['qkv.weight'].T + P['qkv.bias']).split(128, dim=-1)
    heads = [t.reshape(2, 16, 4, 32).transpose(1, 2) for t in (q, k, v)]
    theirs = F.scaled_dot_product_attention(*heads, attn_mask=allowed)
    reference = theirs.transpose(1, 2).reshape(2, 16, 128) @ P['out.weight'].T + P['out.bias']
    rows = allowed.any(dim=1)
    assert close(out[:, rows], reference[:, rows], atol=1e-05), 'Same as PyTorch: False'

@test_case(points=2, hidden=True, 
    failure_message="Same as PyTorch: False for random sizes and numbers of heads. Check: the split of qkv into q, k, v in that order; each of them cut into heads with view(B, T, H, d) and transpose(1, 2) (not view(B, H, T, d)); dividing by sqrt(d) with d = dim // heads, not sqrt(dim); the softmax over the last index; joining the heads with transpose(1, 2) and .contiguous().view(B, T, D); and self.out at the end. RuntimeError: view size is not compatible: you forgot .contiguous() before the last view.")
def test_same_as_pytorch_random_sizes(Config, SelfAttention):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

    def nontrivial(shapes):
        """Values with some life in them for every weight and bias (the mask is left alone)."""
        values = {}
        for name, t in shapes.items():
            if not t.is_floating_point() or not name.endswith(('weight', 'bias')):
                continue
            if name.endswith('bias'):
                values[name] = 0.3 * torch.randn(t.shape, dtype=t.dtype)
            elif t.dim() == 1:
                values[name] = 1 + 0.3 * torch.randn(t.shape, dtype=t.dtype)
            else:
                values[name] = 1.5 * torch.randn(t.shape, dtype=t.dtype) / math.sqrt(t.shape[-1])
        return values

    def hears(attn, x):
        """Your attention's output, and allowed[i, j]: does output site i change when input site j
        changes? (The mask as your attention applies it, whatever it is.)"""
        base = attn(x)
        T = x.shape[1]
        allowed = torch.zeros(T, T, dtype=torch.bool)
        for j in range(T):
            moved = x.clone()
            moved[:, j] += torch.randn(x.shape[0], x.shape[2], dtype=x.dtype)
            allowed[:, j] = (attn(moved) - base).abs().amax(dim=(0, 2)) > 1e-09
        return (base, allowed)

    def attention_from(P, x, H, allowed):
        """softmax(q k^T / sqrt(d)) v for every head, with `allowed` as the mask, from the weights P:
        what F.scaled_dot_product_attention computes, written out."""
        B, T, D = x.shape
        d = D // H
        qkv = x @ P['qkv.weight'].T + P['qkv.bias']
        q, k, v = (qkv[..., s * D:(s + 1) * D].reshape(B, T, H, d).transpose(1, 2) for s in range(3))
        dots = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~allowed, -math.inf)
        y = (dots.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, D)
        return y @ P['out.weight'].T + P['out.bias']
    Config, SelfAttention = (student(Config), student(SelfAttention))
    torch.manual_seed(1)
    for B, T, D, H, C in [(2, 7, 12, 3, 9), (3, 5, 16, 4, 5), (1, 6, 30, 5, 8), (2, 4, 8, 8, 10), (2, 6, 12, 2, 6)]:
        attn = SelfAttention(Config(vocab_size=5, context=C, dim=D, heads=H, layers=1, dropout=0.0)).double().eval()
        attn.set_params(nontrivial(attn.params(values=False)))
        P = attn.params()
        x = torch.randn(B, T, D, dtype=torch.float64)
        out, allowed = hears(attn, x)
        want = attention_from(P, x, H, allowed)
        assert close(out, want, atol=1e-08, rtol=1e-06), f'B={B}, T={T}, dim={D}, heads={H}: your attention differs from softmax(q k^T / sqrt(d)) v per head'

@test_case(points=1, hidden=True, 
    failure_message="Your attention should work for inputs of any length T from 1 up to the whole context, and any batch size: cut the mask with self.mask[:T, :T] and take B, T, D from x.shape (never from the config). RuntimeError: view size is not compatible: you forgot .contiguous() before the last view.")
def test_same_as_pytorch_any_length(Config, SelfAttention):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

    def nontrivial(shapes):
        """Values with some life in them for every weight and bias (the mask is left alone)."""
        values = {}
        for name, t in shapes.items():
            if not t.is_floating_point() or not name.endswith(('weight', 'bias')):
                continue
            if name.endswith('bias'):
                values[name] = 0.3 * torch.randn(t.shape, dtype=t.dtype)
            elif t.dim() == 1:
                values[name] = 1 + 0.3 * torch.randn(t.shape, dtype=t.dtype)
            else:
                values[name] = 1.5 * torch.randn(t.shape, dtype=t.dtype) / math.sqrt(t.shape[-1])
        return values

    def hears(attn, x):
        """Your attention's output, and allowed[i, j]: does output site i change when input site j
        changes? (The mask as your attention applies it, whatever it is.)"""
        base = attn(x)
        T = x.shape[1]
        allowed = torch.zeros(T, T, dtype=torch.bool)
        for j in range(T):
            moved = x.clone()
            moved[:, j] += torch.randn(x.shape[0], x.shape[2], dtype=x.dtype)
            allowed[:, j] = (attn(moved) - base).abs().amax(dim=(0, 2)) > 1e-09
        return (base, allowed)

    def attention_from(P, x, H, allowed):
        """softmax(q k^T / sqrt(d)) v for every head, with `allowed` as the mask, from the weights P:
        what F.scaled_dot_product_attention computes, written out."""
        B, T, D = x.shape
        d = D // H
        qkv = x @ P['qkv.weight'].T + P['qkv.bias']
        q, k, v = (qkv[..., s * D:(s + 1) * D].reshape(B, T, H, d).transpose(1, 2) for s in range(3))
        dots = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(~allowed, -math.inf)
        y = (dots.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, D)
        return y @ P['out.weight'].T + P['out.bias']
    Config, SelfAttention = (student(Config), student(SelfAttention))
    torch.manual_seed(2)
    D, H, C = (12, 3, 8)
    attn = SelfAttention(Config(vocab_size=5, context=C, dim=D, heads=H, layers=1, dropout=0.0)).double().eval()
    attn.set_params(nontrivial(attn.params(values=False)))
    P = attn.params()
    for B, T in [(1, 1), (3, 2), (1, C), (4, C)]:
        x = torch.randn(B, T, D, dtype=torch.float64)
        out, allowed = hears(attn, x)
        assert tuple(out.shape) == (B, T, D), f'for x of shape {(B, T, D)} the output has shape {tuple(out.shape)}'
        want = attention_from(P, x, H, allowed)
        assert close(out, want, atol=1e-08, rtol=1e-06), f'for x of shape {(B, T, D)} (context {C}) your attention differs from softmax(q k^T / sqrt(d)) v'

