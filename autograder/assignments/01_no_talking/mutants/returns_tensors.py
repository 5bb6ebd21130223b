# question: q5
# expect: fail
# replaces: TrainTwoSentences
# why: keeps the loss tensors (with their graphs) instead of plain numbers
def TrainTwoSentences(net, steps=1500):
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        x_0 = torch.stack([SamplePInit() for b in range(64)])
        loss = DiffusionLoss(net, x_0, MASK)
        loss.backward()
        opt.step()
        losses.append(loss)
    return losses
