# question: q1
# expect: fail
# replaces: Attention
# why: k.T only transposes correctly for one sentence; a batch breaks
# says: transposes the keys with k.T, which is right for one sentence but reverses every axis of a batch (k.transpose(-2, -1) swaps only the last two)
def Attention(q, k, v):
    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights
