# question: q7
# expect: fail
# replaces: SameAsPyTorch
# why: the check itself cuts the heads with view(B, H, T, d), so it agrees with the attention that has that bug
def SameAsPyTorch(attn, x):
    B, T, D = x.shape
    H = attn.heads
    q, k, v = attn.qkv(x).split(D, dim=-1)
    split = lambda t: t.reshape(B, H, T, D // H)
    theirs = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
    reference = attn.out(theirs.reshape(B, T, D))
    return torch.allclose(attn(x), reference, atol=1e-5)
