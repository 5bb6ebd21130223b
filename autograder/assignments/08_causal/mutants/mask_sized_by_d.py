# question: q1
# expect: fail
# replaces: Attention
# why: one wrong line: makes the mask with q.shape[-1] (the vector length) instead of q.shape[-2] (the number of sites)
# says: builds the mask with q.shape[-1] (the vector length) instead of q.shape[-2] (the number of sites)
def Attention(q, k, v, causal=False):
    energy = -(q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-1]
        future = torch.triu(torch.ones(L, L, dtype=torch.bool, device=q.device), diagonal=1)
        energy = energy.masked_fill(future[:energy.shape[-2], :energy.shape[-1]], math.inf)
    weights = torch.softmax(-energy, dim=-1)
    return weights @ v, weights
