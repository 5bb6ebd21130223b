# question: q5
# expect: fail
# replaces: TrainTwoSentences
# why: returns the trained network instead of the list of losses
def TrainTwoSentences(net, steps=1500):
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step in range(steps):
        opt.zero_grad()
        x_0 = torch.stack([SamplePInit() for b in range(64)])
        loss = DiffusionLoss(net, x_0, MASK)
        loss.backward()
        opt.step()
    return net
