# question: q5
# expect: fail
# replaces: PredictedNonsense
# why: returns the answer for p = 0.8 whatever p is
def PredictedNonsense(p):
    return 0.32
