# question: q1
# expect: pass
# replaces: Attention
# why: splits the work into a helper and scales the queries first
def _boltzmann(energy):
    return torch.softmax(-energy, dim=-1)


def Attention(q, k, v):
    q = q / math.sqrt(q.shape[-1])
    weights = _boltzmann(-(q @ k.mT))
    out = weights @ v
    return out, weights
