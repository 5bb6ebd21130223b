# question: q1
# expect: fail
# replaces: Attention
# why: k.T only transposes correctly for one sentence; a batch breaks
def Attention(q, k, v):
    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights
