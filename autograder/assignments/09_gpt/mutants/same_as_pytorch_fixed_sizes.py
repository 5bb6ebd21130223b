# question: q7
# expect: fail
# replaces: SameAsPyTorch
# why: copies check.py's sizes (2, 16, cfg.heads, cfg.dim) instead of reading them from x and attn
def SameAsPyTorch(attn, x):
    q, k, v = attn.qkv(x).split(cfg.dim, dim=-1)
    split = lambda t: t.view(2, 16, cfg.heads, -1).transpose(1, 2)
    reference = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
    reference = attn.out(reference.transpose(1, 2).reshape(2, 16, cfg.dim))
    return torch.allclose(attn(x), reference, atol=1e-5)
