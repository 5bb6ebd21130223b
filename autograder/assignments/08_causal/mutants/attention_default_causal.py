# question: q1
# expect: fail
# replaces: Attention
# why: the switch is on by default (causal=True), so Attention(q, k, v) no longer works as before
# says: switches the mask on by default (causal=True), so Attention(q, k, v) no longer lets every site listen to every other
def Attention(q, k, v, causal=True):
    energy = -(q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        L = q.shape[-2]
        future = torch.triu(torch.ones(L, L, dtype=torch.bool, device=q.device), diagonal=1)
        energy = energy.masked_fill(future, math.inf)
    weights = torch.softmax(-energy, dim=-1)
    return weights @ v, weights
