# question: q7
# expect: pass
# replaces: SameAsPyTorch
# why: hands PyTorch the attention's own mask buffer (attn_mask=attn.mask[:T, :T]) instead of is_causal=True, under no_grad
@torch.no_grad()
def SameAsPyTorch(attn, x):
    B, T, D = x.shape
    H = attn.heads
    qkv = attn.qkv(x).reshape(B, T, 3, H, D // H).permute(2, 0, 3, 1, 4)
    theirs = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attn_mask=attn.mask[:T, :T])
    return torch.allclose(attn(x), attn.out(theirs.transpose(1, 2).reshape(B, T, D)), atol=1e-5)
