# question: q1
# replaces: Attention
# why: einsum for both products, q scaled first, the softmax by hand with the row maximum taken off
def Attention(q, k, v):
    d = q.size(-1)
    scores = torch.einsum("...id,...jd->...ij", q / d ** 0.5, k)
    scores = scores - scores.max(dim=-1, keepdim=True).values     # the same weights, no overflow
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.einsum("...ij,...jd->...id", weights, v), weights
