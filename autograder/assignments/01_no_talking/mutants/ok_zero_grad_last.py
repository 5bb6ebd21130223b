# question: q5
# expect: pass
# replaces: TrainTwoSentences
# why: clears the gradients at the end of each step (net.zero_grad), float() instead of .item()
def TrainTwoSentences(net, steps=1500):
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    net.zero_grad()
    losses = []
    bar = tqdm(range(steps))
    for _ in bar:
        batch = torch.stack([SamplePInit() for _ in range(64)])
        loss = DiffusionLoss(net, batch, MASK)
        loss.backward()
        opt.step()
        net.zero_grad(set_to_none=False)
        losses.append(float(loss))
        bar.set_postfix(loss=losses[-1])
    return losses
