# question: q1
# expect: pass
# replaces: Attention
# why: one query at a time in a Python loop (F.softmax, torch.matmul), the rows stacked at the end
def Attention(q, k, v):
    scale = q.size(-1) ** -0.5
    rows = []
    for i in range(q.shape[-2]):
        energies = torch.matmul(q[..., i, :].unsqueeze(-2), k.transpose(-1, -2)) * scale
        rows.append(F.softmax(energies, dim=-1))
    weights = torch.cat(rows, dim=-2)
    return torch.matmul(weights, v), weights
