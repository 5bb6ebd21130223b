# question: q5
# expect: fail
# replaces: TrainTwoSentences
# why: counts the steps from 0 to steps inclusive, so it trains one step more and returns steps + 1 losses
def TrainTwoSentences(net, steps=1500):
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    losses = []
    for step in range(steps + 1):
        opt.zero_grad()
        x_0 = torch.stack([SamplePInit() for b in range(64)])
        loss = DiffusionLoss(net, x_0, MASK)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
