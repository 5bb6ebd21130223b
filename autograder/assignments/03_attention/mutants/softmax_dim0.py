# question: q1
# expect: fail
# replaces: Attention
# why: softmax over dim=0: the columns of one sentence, and across sentences in a batch
def Attention(q, k, v):
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(dots, dim=0)
    return weights @ v, weights
