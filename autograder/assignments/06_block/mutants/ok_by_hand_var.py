# question: q1
# expect: pass
# replaces: NormalizeByHand
# why: the same normalisation written with the variance and a square root
def NormalizeByHand(x):
    centred = x - x.mean(-1, keepdim=True)
    return centred / centred.pow(2).mean(-1, keepdim=True).sqrt()
