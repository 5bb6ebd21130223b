# question: q4
# expect: pass
# replaces: WriteLeftToRight
# why: samples by inverting the cumulative distribution (torch.rand and searchsorted), forbids with a list comprehension of allowed tokens, and builds the story as a Python list
@torch.no_grad()
def WriteLeftToRight(net, start, L=32, temperature=1.0):
    story = StoryTokens(start).tolist()
    device = next(net.parameters()).device
    for step in range(L - len(story)):
        logits = net(torch.tensor(story, device=device)[None])[0, -1].cpu().double()
        allowed = torch.tensor([i not in (STORY_MASK, STORY_UNK) for i in range(len(logits))])
        weights = torch.where(allowed, torch.exp((logits - logits[allowed].max()) / temperature), torch.zeros_like(logits))
        cumulative = torch.cumsum(weights / weights.sum(), dim=0)
        u = torch.rand((), dtype=torch.float64)
        token = int(torch.searchsorted(cumulative, u).clamp(max=len(logits) - 1))
        while not allowed[token]:                       # (rounding at the very top end)
            token -= 1
        story.append(token)
    return StoryText(torch.tensor(story))
