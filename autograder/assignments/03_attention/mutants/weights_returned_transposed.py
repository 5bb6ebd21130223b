# question: q1
# expect: fail
# replaces: Attention
# why: output correct but returns the weights transposed (w_ji)
# says: computes the output right but returns the weights transposed (w_ji in row i)
def Attention(q, k, v):
    dots = q @ k.transpose(-2, -1)
    weights = torch.softmax(dots / math.sqrt(q.shape[-1]), dim=-1)
    out = weights @ v
    return out, weights.transpose(-2, -1)
