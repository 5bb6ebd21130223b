# question: q9
# replaces: StartingLoss
# why: flatten(0, 1) and float() instead of view and .item()
def StartingLoss(model, ids, targets):
    logits = model(ids)
    return float(F.cross_entropy(logits.flatten(0, 1), targets.flatten()))


targets = torch.randint(0, cfg.vocab_size, (2, 16))
start_loss = StartingLoss(model, ids, targets)
print("Starting loss:", start_loss)
