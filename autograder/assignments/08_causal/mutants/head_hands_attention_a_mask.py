# question: q1
# expect: fail
# replaces: Head
# why: a Head that keeps its own mask as a buffer and hands it to its own Attention(..., mask=...): the Head's interface to Attention is not the page's (q, k, v, causal), which costs the Head's test once, and nothing else
# fails: test_causal_head
def Attention(q, k, v, causal=False, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        if mask is None:
            mask = torch.triu(torch.ones(L, L, dtype=torch.bool, device=q.device), diagonal=1)
        scores = scores.masked_fill(mask[:L, :L], -math.inf)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


class Head(nn.Module):
    def __init__(self, dim, head_dim, causal=False, max_length=64):
        super().__init__()
        self.Q = nn.Linear(dim, head_dim, bias=False)
        self.K = nn.Linear(dim, head_dim, bias=False)
        self.V = nn.Linear(dim, head_dim, bias=False)
        self.causal = causal
        self.register_buffer("mask", torch.triu(torch.ones(max_length, max_length, dtype=torch.bool), 1),
                             persistent=False)

    def forward(self, x):
        L = x.shape[-2]
        mask = self.mask if L <= self.mask.shape[0] else None
        out, weights = Attention(self.Q(x), self.K(x), self.V(x), causal=self.causal, mask=mask)
        self.weights = weights.detach()
        return out
