# question: q7
# expect: fail
# replaces: SameAsPyTorch
# why: asks PyTorch for attention without the mask (is_causal left False), so a right causal attention differs
def SameAsPyTorch(attn, x):
    B, T, D = x.shape
    q, k, v = attn.qkv(x).split(D, dim=-1)
    split = lambda t: t.view(B, T, attn.heads, D // attn.heads).transpose(1, 2)
    theirs = F.scaled_dot_product_attention(split(q), split(k), split(v))
    reference = attn.out(theirs.transpose(1, 2).reshape(B, T, D))
    return torch.allclose(attn(x), reference, atol=1e-5)
