# question: q1
# expect: fail
# replaces: Attention
# why: masks the lower triangle (tril): sites hear only the future
# says: masks the past instead of the future (the lower triangle), so each site hears only the sites after it
def Attention(q, k, v, causal=False):
    energy = -(q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        future = torch.tril(torch.ones(L, L, dtype=torch.bool, device=q.device), diagonal=-1)
        energy = energy.masked_fill(future, math.inf)
    weights = torch.softmax(-energy, dim=-1)
    return weights @ v, weights
