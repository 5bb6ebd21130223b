# question: q1
# expect: fail
# replaces: Attention
# why: k @ q^T instead of q @ k^T: site i weighs the sites j by how well its key matches their queries
# says: computes k q^T instead of q k^T: site i weighs the other sites by how well its key matches their queries
def Attention(q, k, v):
    dots = k @ q.transpose(-2, -1)
    weights = torch.softmax(dots / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights
