# question: q5
# expect: pass
# replaces: PredictedNonsense
# why: one minus the chance of a real sentence (cat and alive, or box and empty), as a tensor
import torch


def PredictedNonsense(p):
    p = torch.tensor(float(p))
    return 1 - p ** 2 - (1 - p) ** 2
