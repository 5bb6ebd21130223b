# question: q1
# expect: fail
# replaces: Attention
# why: returns the right weights, but multiplies the values by the scaled energies, not by the weights
# says: gets the weights right but multiplies the values by the scaled dot products instead of by the weights
def Attention(q, k, v):
    dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(dots, dim=-1)
    return dots @ v, weights
