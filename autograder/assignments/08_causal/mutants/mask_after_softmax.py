# question: q1
# expect: fail
# replaces: Attention
# why: takes the softmax over all the sites, then zeroes the future and renormalises: the weights look right but rounding leaks a tiny gradient to the future
def Attention(q, k, v, causal=False):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if causal:
        L = q.shape[-2]
        keep = torch.tril(torch.ones(L, L, device=q.device))
        weights = weights * keep
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v, weights
