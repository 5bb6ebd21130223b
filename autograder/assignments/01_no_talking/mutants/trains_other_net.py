# question: q5
# expect: fail
# replaces: TrainTwoSentences
# why: builds its own NoTalking inside and trains that one, not the network it was given
def TrainTwoSentences(net, steps=1500):
    model = NoTalking(len(vocab))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        x_0 = torch.stack([SamplePInit() for b in range(64)])
        loss = DiffusionLoss(model, x_0, MASK)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
