# question: q1
# replaces: Attention
# why: the mask made in forward with torch.tril, the scores set to -inf with masked_fill (no energies)
def Attention(q, k, v, causal=False):
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    if causal:
        T = scores.shape[-1]
        allowed = torch.tril(torch.ones(T, T, device=q.device)).bool()     # j <= i
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    return weights @ v, weights
