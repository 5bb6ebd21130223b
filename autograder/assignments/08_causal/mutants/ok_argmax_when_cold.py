# question: q4
# expect: pass
# replaces: WriteLeftToRight
# why: takes the argmax when the temperature is tiny, samples otherwise
@torch.no_grad()
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    x = StoryTokens(start)
    device = next(net.parameters()).device
    for step in range(L - len(x)):
        logits = net(x.unsqueeze(0).to(device))[0, -1].cpu()
        logits[STORY_MASK] = -math.inf
        logits[STORY_UNK] = -math.inf
        if temperature < 1e-3:
            new = logits.argmax().reshape(1)
        else:
            new = torch.multinomial(torch.softmax(logits / temperature, dim=-1), 1)
        x = torch.cat([x, new])
    return StoryText(x)
