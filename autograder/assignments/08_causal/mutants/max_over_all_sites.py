# question: q1
# expect: fail
# replaces: Attention
# why: a softmax by hand that subtracts the maximum over all the sites (the future too) and multiplies by the mask after exp
def Attention(q, k, v, causal=False):
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    e = torch.exp(dots - dots.max(dim=-1, keepdim=True).values)
    if causal:
        L = q.shape[-2]
        e = e * torch.tril(torch.ones(L, L, device=q.device))
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ v, weights
