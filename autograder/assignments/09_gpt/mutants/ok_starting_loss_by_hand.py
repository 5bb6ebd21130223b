# question: q9
# expect: pass
# replaces: StartingLoss
# why: minus the mean log-probability of the targets, with log_softmax and gather, as a 0-dim tensor
def StartingLoss(model, ids, targets):
    logp = model(ids).log_softmax(dim=-1)
    return -logp.gather(-1, targets.unsqueeze(-1)).mean()


targets = torch.randint(0, cfg.vocab_size, (2, 16))
start_loss = StartingLoss(model, ids, targets)
