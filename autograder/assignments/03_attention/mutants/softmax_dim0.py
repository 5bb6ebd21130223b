# question: q1
# expect: fail
# replaces: Attention
# why: softmax over dim=0: the columns of one sentence, and across sentences in a batch
# says: takes the softmax over dim=0, which in a batch runs across the sentences: each row of weights must add up to one (dim=-1)
def Attention(q, k, v):
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(dots, dim=0)
    return weights @ v, weights
