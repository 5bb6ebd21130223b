# question: q8
# expect: fail
# replaces: NoPeeking
# why: keeps check.py's [:, :5], which is "every site but the last" only for inputs of six tokens
def NoPeeking(model, a, b):
    return torch.allclose(model(a)[:, :5], model(b)[:, :5], atol=1e-5)
