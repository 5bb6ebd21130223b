# question: q2
# expect: pass
# replaces: CopyToMyTransformer
# why: builds a whole state_dict for MyTransformer and loads it in one go; sizes read from the tensors
def CopyToMyTransformer(gpt):
    theirs = gpt.state_dict()
    V, D = theirs["tokens.weight"].shape
    C = theirs["positions.weight"].shape[0]
    L, H = len(gpt.blocks), gpt.blocks[0].attn.heads
    d = D // H
    net = page.MyTransformer(V, D, H, L, max_length=C, causal=True)
    mine = {"embed.weight": theirs["tokens.weight"], "position.weight": theirs["positions.weight"],
            "norm.weight": theirs["norm.weight"], "norm.bias": theirs["norm.bias"],
            "out.weight": theirs["tokens.weight"], "out.bias": torch.zeros(V)}
    for i in range(L):
        g, m = f"blocks.{i}.", f"blocks.{i}."
        W, b = theirs[g + "attn.qkv.weight"], theirs[g + "attn.qkv.bias"]
        Wq, Wk, Wv = W.chunk(3)
        for h in range(H):
            for name, part in (("Q", Wq), ("K", Wk), ("V", Wv)):
                mine[m + f"attention.heads.{h}.{name}.weight"] = part[h * d:(h + 1) * d]
        Wo, bo = theirs[g + "attn.out.weight"], theirs[g + "attn.out.bias"]
        mine[m + "attention.mix.weight"] = Wo
        mine[m + "attention.mix.bias"] = bo + Wo @ b.chunk(3)[2]
        for n in ("norm1", "norm2"):
            mine[m + f"{n}.weight"], mine[m + f"{n}.bias"] = theirs[g + f"{n}.weight"], theirs[g + f"{n}.bias"]
        for mine_name, their_name in (("mlp.0", "mlp.up"), ("mlp.2", "mlp.down")):
            for part in ("weight", "bias"):
                mine[m + f"{mine_name}.{part}"] = theirs[g + f"{their_name}.{part}"]
    net.load_state_dict(mine)
    return net
