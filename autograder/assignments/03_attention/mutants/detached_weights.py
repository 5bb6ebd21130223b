# question: q1
# expect: fail
# replaces: Attention
# why: detaches the weights inside Attention, so no gradient reaches the queries and keys
def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1).detach()
    return weights @ v, weights
