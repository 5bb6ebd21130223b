# question: q8
# expect: pass
# replaces: NoPeeking
# why: measures the largest difference of the logits before the last site, without gradients
def NoPeeking(model, a, b):
    with torch.no_grad():
        gap = (model(a) - model(b))[:, :-1].abs().max().item()
    return gap <= 1e-5
