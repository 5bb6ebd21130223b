# question: q1
# expect: pass
# replaces: Attention
# why: einsum with ellipsis for the batch indices
def Attention(q, k, v):
    d = q.shape[-1]
    dots = torch.einsum("...id,...jd->...ij", q, k) / d ** 0.5
    weights = dots.softmax(dim=-1)
    out = torch.einsum("...ij,...jd->...id", weights, v)
    return out, weights
