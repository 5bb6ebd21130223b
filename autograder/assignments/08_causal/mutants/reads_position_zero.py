# question: q4
# expect: fail
# replaces: WriteLeftToRight
# why: takes the logits of the first position instead of the last
@torch.no_grad()
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    x = StoryTokens(start)
    device = next(net.parameters()).device
    while len(x) < L:
        logits = net(x[None].to(device))[0, 0].cpu()
        logits[[STORY_MASK, STORY_UNK]] = -math.inf
        p = torch.softmax(logits / temperature, dim=-1)
        x = torch.cat([x, torch.multinomial(p, 1)])
    return StoryText(x)
