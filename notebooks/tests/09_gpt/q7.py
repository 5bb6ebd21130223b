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

