# question: q1
# expect: fail
# replaces: NormalizeByHand
# why: normalises over the batch index instead of over each site's vector
def NormalizeByHand(x):
    return (x - x.mean(dim=0, keepdim=True)) / x.std(dim=0, keepdim=True, unbiased=False)
