# question: q1
# expect: fail
# replaces: Attention
# why: takes the Boltzmann weight e^{+E} instead of e^{-E}: listens to the worst matches
# says: takes the softmax of minus the scaled dot products (e^{+E} instead of e^{-E}), so each site listens most to the sites that match it worst
def Attention(q, k, v):
    energy = -(q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    weights = torch.softmax(energy, dim=-1)
    return weights @ v, weights
