# question: q1
# expect: fail
# replaces: RowSums
# why: sums over the first index (the columns) instead of the last
# hint: sum over the last index, dim=-1
def RowSums(x):
    return x.sum(dim=0)
