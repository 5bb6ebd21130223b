# question: q3
# replaces: causal_same, noncausal_same
# why: a network of each kind in eval mode, the identical sites found with torch.isclose over the last index
Seed(0)
results = {}
for causal in [True, False]:
    model = MyTransformer(len(vocab), dim=32, heads=2, layers=2, causal=causal).eval()
    with torch.no_grad():
        alive = model(Encode("the cat is alive").unsqueeze(0)).squeeze(0)
        empty = model(Encode("the cat is empty").unsqueeze(0)).squeeze(0)
    same_site = torch.isclose(alive, empty, rtol=1e-5, atol=1e-8).all(dim=-1)
    results[causal] = [int(i) for i in torch.nonzero(same_site).flatten()]
causal_same, noncausal_same = results[True], results[False]
print("causal=True: identical at", causal_same, "  causal=False: identical at", noncausal_same)
