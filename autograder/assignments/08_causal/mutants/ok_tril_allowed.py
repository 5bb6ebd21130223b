# question: q1
# expect: pass
# replaces: Attention
# why: keeps the allowed sites with tril and fills the rest of the dot products with -inf
def Attention(q, k, v, causal=False):
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        allowed = torch.tril(torch.ones(L, L, dtype=torch.bool, device=q.device))
        dots = dots.masked_fill(~allowed, -math.inf)
    weights = dots.softmax(dim=-1)
    return weights @ v, weights
