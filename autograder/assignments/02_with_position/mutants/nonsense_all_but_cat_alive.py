# question: q5
# expect: fail
# replaces: PredictedNonsense
# why: calls everything but "the cat is alive" nonsense, forgetting that "the box is empty" is a real sentence
def PredictedNonsense(p):
    return 1 - p * p
