# question: q1
# expect: fail
# replaces: Attention
# why: calls masked_fill but throws away its result, so nothing is masked
# says: masks nothing when causal=True (one way to get there: masked_fill returns a new tensor and leaves its input as it was, so its result must be assigned)
def Attention(q, k, v, causal=False):
    energy = -(q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        future = torch.triu(torch.ones(L, L, dtype=torch.bool, device=q.device), diagonal=1)
        energy.masked_fill(future, math.inf)
    weights = torch.softmax(-energy, dim=-1)
    return weights @ v, weights
