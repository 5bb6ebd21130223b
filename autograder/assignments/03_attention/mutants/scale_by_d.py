# question: q1
# expect: fail
# replaces: Attention
# why: divides by d instead of sqrt(d)
# says: divides the dot products by d instead of by sqrt(d)
def Attention(q, k, v):
    d = q.shape[-1]
    weights = torch.softmax((q @ k.transpose(-2, -1)) / d, dim=-1)
    return weights @ v, weights
