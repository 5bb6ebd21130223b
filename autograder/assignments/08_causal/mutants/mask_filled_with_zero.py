# question: q1
# expect: fail
# replaces: Attention
# why: fills the future dot products with 0 instead of -inf
# says: fills the future's scores with 0 instead of -inf before the softmax, so the future still gets weight
def Attention(q, k, v, causal=False):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        future = torch.triu(torch.ones(L, L, dtype=torch.bool, device=q.device), diagonal=1)
        scores = scores.masked_fill(future, 0.0)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
