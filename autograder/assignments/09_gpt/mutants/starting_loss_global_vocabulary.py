# question: q9
# expect: fail
# replaces: StartingLoss
# why: flattens with the notebook's cfg.vocab_size instead of the logits' own size, so it works for 1024 tokens only
def StartingLoss(model, ids, targets):
    return F.cross_entropy(model(ids).view(-1, cfg.vocab_size), targets.view(-1)).item()


targets = torch.randint(0, cfg.vocab_size, (2, 16))
start_loss = StartingLoss(model, ids, targets)
