# question: q1
# expect: pass
# replaces: Attention
# why: energies and an explicit, numerically safe Boltzmann normalisation
def Attention(q, k, v):
    energy = -torch.matmul(q, torch.swapaxes(k, -1, -2)) / math.sqrt(k.size(-1))
    energy = energy - energy.min(dim=-1, keepdim=True).values      # shift: the ground state is 0
    boltzmann = torch.exp(-energy)
    weights = boltzmann / boltzmann.sum(dim=-1, keepdim=True)
    return weights @ v, weights
