# question: q1
# expect: pass
# replaces: Attention
# why: adds a matrix of 0 and -inf to the dot products
def Attention(q, k, v, causal=False):
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        dots = dots + torch.full((L, L), -math.inf, device=q.device).triu(1)
    weights = torch.softmax(dots, dim=-1)
    return weights @ v, weights
