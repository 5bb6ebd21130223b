# question: q1
# expect: pass
# replaces: Attention
# why: the GIVEN Attention was changed to a softmax over dim=1 (right for one sentence, wrong for a batch); the Head itself is right
def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=1)
    return weights @ v, weights
