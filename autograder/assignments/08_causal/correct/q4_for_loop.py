# question: q4
# replaces: WriteLeftToRight
# why: a for loop over the tokens still to write, torch.no_grad inside, the two tokens forbidden one at a time
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    tokens = StoryTokens(start)
    device = next(net.parameters()).device
    with torch.no_grad():
        for _ in range(L - len(tokens)):
            logits = net(tokens.unsqueeze(0).to(device))[0][-1].cpu()
            logits[STORY_MASK] = float("-inf")
            logits[STORY_UNK] = float("-inf")
            probs = F.softmax(logits / temperature, dim=-1)
            next_token = torch.multinomial(probs, num_samples=1)
            tokens = torch.cat((tokens, next_token))
    return StoryText(tokens)
