# question: q5
# expect: pass
# replaces: TrainTwoSentences
# why: each step averages the gradients of two half batches of 32 (gradient accumulation, cleared every step)
def TrainTwoSentences(net, steps=1500):
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        total = 0.0
        for half in range(2):
            x_0 = torch.stack([SamplePInit() for b in range(32)])
            loss = DiffusionLoss(net, x_0, MASK) / 2
            loss.backward()
            total += loss.item()
        opt.step()
        losses.append(total)
    return losses
