# question: q1
# expect: fail
# replaces: Attention
# why: divides by the square root of the number of sites L instead of the vector length d
# hint: softmax(q k^T / sqrt(L))
def Attention(q, k, v):
    dots = q @ k.transpose(-2, -1)
    weights = torch.softmax(dots / math.sqrt(q.shape[-2]), dim=-1)
    return weights @ v, weights
