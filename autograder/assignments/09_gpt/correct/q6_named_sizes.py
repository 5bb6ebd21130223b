# question: q6
# replaces: gpt_params, tying_saves
# why: the count as a formula with named sizes, piece by piece
D, V, T = 128, 1024, 128          # dim, vocab_size, context
L = 4                             # layers
attention = 4 * D * D + 4 * D     # qkv (D x 3D and 3D) and out (D x D and D)
mlp = 8 * D * D + 5 * D           # up (D x 4D and 4D) and down (4D x D and D)
norms = 2 * 2 * D                 # norm1 and norm2: a weight and a bias each
block = attention + mlp + norms
gpt_params = V * D + T * D + L * block + 2 * D       # the head shares the token table
stories_vocab = 2002
tying_saves = stories_vocab * D
print(f"by hand: {gpt_params:,}")
print(f"weight tying saves {tying_saves:,} numbers with the stories' vocabulary")
