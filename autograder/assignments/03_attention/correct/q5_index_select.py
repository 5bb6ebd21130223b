# question: q5
# replaces: perm, shuffle_agrees, shuffled_weights_are
# why: the shuffled inputs indexed as [perm, :], index_select for the shuffled output, the chosen
# expression copied without its space
perm = torch.randperm(5)

shuffled_out, shuffled_weights = Attention(q[perm, :], k[perm, :], v[perm, :])
shuffle_agrees = bool(torch.allclose(shuffled_out, out.index_select(0, perm), atol=1e-6))
shuffled_weights_are = "weights[perm][:,perm]"
print(perm, shuffle_agrees, shuffled_weights_are)
