# question: q1
# expect: fail
# replaces: NormalizeByHand
# why: divides by the unbiased standard deviation (N - 1), which LayerNorm does not use
def NormalizeByHand(x):
    return (x - x.mean(dim=-1, keepdim=True)) / x.std(dim=-1, keepdim=True)
