# question: q7
# expect: pass
# replaces: SameAsPyTorch
# why: writes the reference out by hand (einsum, a tril mask, softmax) instead of calling F.scaled_dot_product_attention
def SameAsPyTorch(attn, x):
    B, T, D = x.shape
    H = attn.heads
    d = D // H
    W, b = attn.qkv.weight, attn.qkv.bias
    q, k, v = (F.linear(x, W[s * D:(s + 1) * D], b[s * D:(s + 1) * D]).reshape(B, T, H, d) for s in range(3))
    dots = torch.einsum("bihc,bjhc->bhij", q, k) / d ** 0.5
    allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
    weights = dots.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
    reference = attn.out(torch.einsum("bhij,bjhc->bihc", weights, v).reshape(B, T, D))
    return bool((attn(x) - reference).abs().max() <= 1e-5 + 1e-5 * reference.abs().max())
