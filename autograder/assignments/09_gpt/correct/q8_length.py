# question: q8
# replaces: NoPeeking
# why: every site but the last taken as :T - 1, with T read off the input
def NoPeeking(model, a, b):
    T = a.shape[1]
    logits_a, logits_b = model(a), model(b)
    return torch.allclose(logits_a[:, :T - 1], logits_b[:, :T - 1], atol=1e-5)


a = torch.tensor([[1, 5, 6, 7, 8, 9]])
b = torch.tensor([[1, 5, 6, 7, 8, 3]])           # the same, except for the last token
no_peeking = NoPeeking(model, a, b)
print("Doesn't look into the future:", no_peeking)
