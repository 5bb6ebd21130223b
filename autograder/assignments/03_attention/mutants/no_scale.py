# question: q1
# expect: fail
# replaces: Attention
# why: forgets the 1/sqrt(d): the Boltzmann distribution is too cold
# hint: softmax(q k^T / 1 (no scale))
# says: forgets to divide the dot products by sqrt(d), the length of the query vectors (q.shape[-1])
def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return weights @ v, weights
