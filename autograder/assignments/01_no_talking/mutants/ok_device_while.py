# question: q5
# expect: pass
# replaces: TrainTwoSentences
# why: a while loop, the batch sent to the network's device, a slightly larger learning rate
def TrainTwoSentences(net, steps=1500):
    where = next(net.parameters()).device
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    losses = []
    while len(losses) < steps:
        x_0 = torch.stack([SamplePInit() for b in range(64)]).to(where)
        opt.zero_grad(set_to_none=True)
        loss = DiffusionLoss(net, x_0, MASK)
        loss.backward()
        opt.step()
        losses.append(loss.detach().cpu().item())
    return losses
