# question: q2
# expect: pass
# replaces: MultiHead
# why: computes every head at once with einsum over the stacked Q, K, V matrices and an inline softmax (no call of Attention), saving each head's weights
class MultiHead(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = nn.ModuleList([Head(dim, dim // heads) for h in range(heads)])
        self.mix = nn.Linear(dim, dim)

    def forward(self, x):
        Wq = torch.stack([h.Q.weight for h in self.heads])     # (H, hd, dim)
        Wk = torch.stack([h.K.weight for h in self.heads])
        Wv = torch.stack([h.V.weight for h in self.heads])
        q = torch.einsum("...ld,hed->...hle", x, Wq)
        k = torch.einsum("...ld,hed->...hle", x, Wk)
        v = torch.einsum("...ld,hed->...hle", x, Wv)
        weights = torch.softmax(torch.einsum("...hie,...hje->...hij", q, k) / Wq.shape[1] ** 0.5, dim=-1)
        for i, h in enumerate(self.heads):
            h.weights = weights.select(-3, i).detach()
        out = torch.einsum("...hij,...hje->...ihe", weights, v)  # (..., L, H, hd): heads side by side
        return self.mix(out.flatten(-2))
