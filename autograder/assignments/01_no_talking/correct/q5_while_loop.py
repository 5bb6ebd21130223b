# question: q5
# replaces: TrainTwoSentences
# why: a while loop with a step counter, zero_grad(set_to_none=True), float(loss) for the number
def TrainTwoSentences(net, steps=1500):
    optimizer = torch.optim.Adam(params=net.parameters(), lr=0.001)
    history = []
    step = 0
    while step < steps:
        batch = torch.stack([SamplePInit() for _ in range(64)])
        optimizer.zero_grad(set_to_none=True)
        loss = DiffusionLoss(net, batch, MASK)
        loss.backward()
        optimizer.step()
        history.append(float(loss))
        step += 1
    return history
