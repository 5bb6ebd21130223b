# question: q1
# expect: fail
# replaces: Attention
# why: diagonal=0 also hides site i from itself (the first row becomes NaN)
# says: also hides each site from itself (the mask's diagonal), so the first site has nothing left to listen to and its weights are NaN
def Attention(q, k, v, causal=False):
    energy = -(q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        future = torch.triu(torch.ones(L, L, dtype=torch.bool, device=q.device), diagonal=0)
        energy = energy.masked_fill(future, math.inf)
    weights = torch.softmax(-energy, dim=-1)
    return weights @ v, weights
