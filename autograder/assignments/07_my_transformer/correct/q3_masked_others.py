# question: q3
# replaces: first_unchanged
# why: x2 as a copy of x with every other sentence masked out completely
x2 = x.clone()
x2[1:] = MASK                                      # the other sentences: all masks
with torch.no_grad():
    first_unchanged = bool(torch.allclose(net(x)[0], net(x2)[0]))
print(first_unchanged)
