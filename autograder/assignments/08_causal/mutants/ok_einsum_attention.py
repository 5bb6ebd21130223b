# question: q1
# expect: pass
# replaces: Attention
# why: dot products with einsum, the future hidden with torch.where before the softmax, the mask made by comparing two aranges
def Attention(q, k, v, causal=False):
    d = q.shape[-1]
    dots = torch.einsum("...id,...jd->...ij", q, k) / d ** 0.5
    if causal:
        i = torch.arange(q.shape[-2], device=q.device)
        allowed = i[None, :] <= i[:, None]                  # allowed[i, j]: j <= i
        dots = torch.where(allowed, dots, torch.full_like(dots, -math.inf))
    weights = dots.softmax(dim=-1)
    return torch.einsum("...ij,...jd->...id", weights, v), weights
