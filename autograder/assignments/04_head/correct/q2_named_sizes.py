# question: q2
# replaces: head_params
# why: the count as a formula with named sizes
dim, head_dim = 32, 8
per_matrix = head_dim * dim          # one nn.Linear(dim, head_dim, bias=False)
head_params = 3 * per_matrix         # Q, K and V
print("by hand:", head_params)
