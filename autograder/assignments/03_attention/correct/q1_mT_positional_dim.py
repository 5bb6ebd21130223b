# question: q1
# replaces: Attention
# why: .mT, the scale as a power, the softmax method with the dimension given by position
def Attention(q, k, v):
    scores = (q @ k.mT) * q.shape[-1] ** -0.5
    weights = scores.softmax(-1)
    out = weights @ v
    return out, weights
