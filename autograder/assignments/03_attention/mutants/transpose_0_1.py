# question: q1
# expect: fail
# replaces: Attention
# why: k.transpose(0, 1) instead of (-2, -1): right for one sentence, wrong on batches
# says: transposes the keys with k.transpose(0, 1), which for a batch swaps the sentences and the sites (k.transpose(-2, -1) swaps only the last two)
def Attention(q, k, v):
    dots = q @ k.transpose(0, 1)
    weights = torch.softmax(dots / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights
