# question: q1
# expect: fail
# replaces: Attention
# why: ignores the queries and keys: every site listens to every site equally (rows still add to one)
def Attention(q, k, v):
    L = k.shape[-2]
    weights = torch.ones(*q.shape[:-1], L) / L + 0 * (q @ k.transpose(-2, -1))
    return weights @ v, weights
