# question: q3
# replaces: embed, embed_matches
# why: nn.Embedding made with keyword arguments, the match checked element by element
embed = nn.Embedding(num_embeddings=len(vocab), embedding_dim=8)
embed_matches = bool((embed(x) == embed.weight[x]).all())
print(embed_matches)
