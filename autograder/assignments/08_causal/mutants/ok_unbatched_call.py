# question: q4
# expect: pass
# replaces: WriteLeftToRight
# why: calls the network on the unbatched story (L,) and reads row -1; forbids tokens with masked_fill; no_grad as a with block
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    with torch.no_grad():
        tokens = StoryTokens(start).tolist()
        device = next(net.parameters()).device
        banned = torch.zeros(len(story_vocab), dtype=torch.bool)
        banned[STORY_MASK] = banned[STORY_UNK] = True
        for _ in range(L - len(tokens)):
            logits = net(torch.tensor(tokens, device=device))[-1].cpu()
            logits = logits.masked_fill(banned, -math.inf)
            tokens.append(int(torch.multinomial(torch.softmax(logits / temperature, -1), 1)))
        return StoryText(torch.tensor(tokens))
