# question: q1
# expect: fail
# replaces: Attention
# why: sums over the wrong index: o_i = sum_j w_ji v_j
# says: multiplies the values by the transposed weights, so site i's output adds up w_ji v_j instead of w_ij v_j
def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights.transpose(-2, -1) @ v, weights
