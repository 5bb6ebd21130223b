# question: q4
# expect: fail
# replaces: WriteLeftToRight
# why: calls the network on the prompt every time instead of on the story so far
@torch.no_grad()
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    prompt = StoryTokens(start)
    x = prompt
    device = next(net.parameters()).device
    while len(x) < L:
        logits = net(prompt[None].to(device))[0, -1].cpu()
        logits[[STORY_MASK, STORY_UNK]] = -math.inf
        p = torch.softmax(logits / temperature, dim=-1)
        x = torch.cat([x, torch.multinomial(p, 1)])
    return StoryText(x)
