# question: q1
# expect: fail
# replaces: Attention
# why: divides by the square root of the number of sites L instead of the vector length d
# hint: softmax(q k^T / sqrt(L))
# says: divides the dot products by the square root of the number of sites (q.shape[-2]) instead of the vector length d (q.shape[-1])
def Attention(q, k, v):
    dots = q @ k.transpose(-2, -1)
    weights = torch.softmax(dots / math.sqrt(q.shape[-2]), dim=-1)
    return weights @ v, weights
