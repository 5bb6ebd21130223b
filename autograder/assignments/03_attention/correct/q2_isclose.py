# question: q2
# replaces: rows_add_to_one, agrees_with_pytorch
# why: torch.isclose(...).all() and the largest difference, made plain Python booleans
torch.manual_seed(0)
q, k, v = torch.randn(3, 5, 8)                 # three tensors of shape (5, 8)
out, weights = Attention(q, k, v)

rows_add_to_one = bool(torch.isclose(weights.sum(-1), torch.ones(5)).all())
difference = (out - F.scaled_dot_product_attention(q, k, v)).abs().max().item()
agrees_with_pytorch = difference < 1e-6
print("every row adds up to one:", rows_add_to_one)
print("agrees with pytorch:     ", agrees_with_pytorch)
