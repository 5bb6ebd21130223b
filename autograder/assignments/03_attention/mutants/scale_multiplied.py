# question: q1
# expect: fail
# replaces: Attention
# why: multiplies the dot products by sqrt(d) instead of dividing
# says: multiplies the dot products by sqrt(d) instead of dividing by it
def Attention(q, k, v):
    dots = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = torch.softmax(dots, dim=-1)
    return weights @ v, weights
