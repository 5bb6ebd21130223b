# question: q5
# expect: fail
# replaces: TrainTwoSentences
# why: clears the gradients between backward() and step(), so the optimizer never sees them
def TrainTwoSentences(net, steps=1500):
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    losses = []
    for step in range(steps):
        x_0 = torch.stack([SamplePInit() for b in range(64)])
        loss = DiffusionLoss(net, x_0, MASK)
        loss.backward()
        opt.zero_grad()
        opt.step()
        losses.append(loss.item())
    return losses
