# question: q1
# expect: fail
# replaces: Attention
# why: softmax over the dot products but fills the future with +inf instead of -inf
# says: fills the future's scores with +inf instead of -inf before the softmax, so the weights go to the future (or become NaN) instead of leaving it out
def Attention(q, k, v, causal=False):
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        future = torch.triu(torch.ones(L, L, dtype=torch.bool, device=q.device), diagonal=1)
        dots = dots.masked_fill(future, math.inf)
    weights = torch.softmax(dots, dim=-1)
    return weights @ v, weights
