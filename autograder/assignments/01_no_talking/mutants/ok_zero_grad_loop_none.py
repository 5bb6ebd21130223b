# question: q5
# expect: pass
# replaces: TrainTwoSentences
# why: clears the gradients by hand (p.grad = None) at the top of each step; the optimizer gets a list of the parameters
def TrainTwoSentences(net, steps=1500):
    params = list(net.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    losses = []
    for step in range(steps):
        for p in params:
            p.grad = None
        loss = DiffusionLoss(net, torch.stack([SamplePInit() for b in range(64)]), MASK)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
