# question: q9
# expect: fail
# replaces: StartingLoss
# why: adds up the losses of all the tokens instead of averaging them
def StartingLoss(model, ids, targets):
    logits = model(ids)
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), reduction="sum").item()


targets = torch.randint(0, cfg.vocab_size, (2, 16))
start_loss = StartingLoss(model, ids, targets)
