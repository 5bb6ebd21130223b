# question: q5
# expect: fail
# replaces: TrainTwoSentences
# why: trains correctly but forgets to return the losses (the caller gets None)
def TrainTwoSentences(net, steps=1500):
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    losses = []
    for step in tqdm(range(steps)):
        opt.zero_grad()
        x_0 = torch.stack([SamplePInit() for b in range(64)])
        loss = DiffusionLoss(net, x_0, MASK)
        loss.backward()
        opt.step()
        losses.append(loss.item())
