# question: q5
# expect: fail
# replaces: PredictedNonsense
# why: counts only one of the two nonsense sentences (cat and empty), not box and alive
def PredictedNonsense(p):
    return p * (1 - p)
