# question: q1
# expect: fail
# replaces: Attention
# why: breaks the rules: lets F.scaled_dot_product_attention do the work
def Attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return F.scaled_dot_product_attention(q, k, v), weights
