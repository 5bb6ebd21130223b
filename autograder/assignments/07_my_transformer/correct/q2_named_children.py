# question: q2
# replaces: n_params, largest_piece
# why: the pieces from named_children() (one block standing for the blocks), the count by hand with named sizes
big = MyTransformer(2002)

D, V, M = 128, 2002, 64                  # dim, vocabulary, max_length
block = 12 * D * D + 10 * D              # attention (3 D*D + D*D + D), mlp (8 D*D + 5 D), two norms (4 D)
n_params = V * D + M * D + 4 * block + 2 * D + (D * V + V)
sizes = {}
for name, child in big.named_children():
    piece = child[0] if name == "blocks" else child
    sizes[name] = sum(p.numel() for p in piece.parameters())
largest_piece = sorted(sizes, key=lambda name: sizes[name])[-1]
print(n_params, largest_piece, sizes)
