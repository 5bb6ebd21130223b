# question: q1
# replaces: NormalizeByHand
# why: the variance written out as the mean of the squared deviations, then its square root
def NormalizeByHand(x):
    mu = x.mean(-1, keepdim=True)
    centred = x - mu
    variance = (centred ** 2).mean(-1, keepdim=True)
    return centred / torch.sqrt(variance)
