# question: q2
# replaces: n_params, largest_piece
# why: the count from parameters(), the pieces counted with getattr by name, the largest with max
big = MyTransformer(2002)

n_params = sum(p.numel() for p in big.parameters())
sizes = {name: Count(getattr(big, name)) for name in ("embed", "position", "norm", "out")}
sizes["one block"] = Count(big.blocks[0])
for name, size in sizes.items():
    print(f"{name:>10}: {size:,}")
largest_piece = max(sizes, key=sizes.get)
print(n_params, largest_piece)
