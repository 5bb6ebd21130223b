# question: q1
# replaces: NormalizeByHand
# why: x.var(unbiased=False) and a power of -1/2
def NormalizeByHand(x):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, unbiased=False, keepdim=True)
    return (x - mean) * var ** -0.5
