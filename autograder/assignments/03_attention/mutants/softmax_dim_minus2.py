# question: q1
# expect: fail
# replaces: Attention
# why: normalises over i (the columns) instead of over j
# says: normalises each column of the weights (softmax over dim=-2) instead of each row (dim=-1)
def Attention(q, k, v):
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(dots, dim=-2)
    return weights @ v, weights
