# question: q4
# expect: pass
# replaces: WriteLeftToRight
# why: samples from log_softmax probabilities with a list of tokens
@torch.no_grad()
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    tokens = StoryTokens(start).tolist()
    device = next(net.parameters()).device
    while len(tokens) < L:
        logits = net(torch.tensor([tokens], device=device))[0, -1].float().cpu() / temperature
        logits[STORY_MASK] = logits[STORY_UNK] = float("-inf")
        p = logits.log_softmax(-1).exp()
        tokens.append(int(torch.multinomial(p, 1)))
    return StoryText(torch.tensor(tokens))
