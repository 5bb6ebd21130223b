# question: q7
# expect: fail
# replaces: SameAsPyTorch
# why: a check that cannot fail: it compares attn(x) with attn(x)
def SameAsPyTorch(attn, x):
    return torch.allclose(attn(x), attn(x), atol=1e-5)
