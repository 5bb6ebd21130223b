# question: q8
# expect: fail
# replaces: NoPeeking
# why: compares the logits at every site, the last one too, which is allowed to differ
def NoPeeking(model, a, b):
    return torch.allclose(model(a), model(b), atol=1e-5)
