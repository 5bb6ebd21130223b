# question: q5
# replaces: PredictedNonsense
# why: the two ways of nonsense are equally likely: 2 p (1 - p)
def PredictedNonsense(p):
    q = 1 - p
    return 2 * p * q
