# question: q1
# expect: pass
# replaces: Attention
# why: the GIVEN Attention was changed to forget the scale; the Head itself is right, so Head keeps full marks
def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return weights @ v, weights
