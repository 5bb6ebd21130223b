# question: q5
# replaces: PredictedNonsense
# why: one minus the chance of sense (both choices the cat way, or both the box way)
def PredictedNonsense(p):
    sense = p ** 2 + (1 - p) ** 2
    return 1 - sense
