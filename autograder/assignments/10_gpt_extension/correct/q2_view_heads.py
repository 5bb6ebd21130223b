# question: q2
# replaces: CopyToMyTransformer
# why: qkv.weight viewed as (3, H, d, D) once, the heads indexed from it; weights set with .data, biases folded with torch.addmv
def CopyToMyTransformer(gpt):
    cfg = gpt.cfg
    H, D = cfg.heads, cfg.dim
    net = page.MyTransformer(cfg.vocab_size, D, H, cfg.layers, max_length=cfg.context, causal=True)
    net.embed.weight.data = gpt.tokens.weight.detach().clone()
    net.position.weight.data = gpt.positions.weight.detach().clone()
    for mine, theirs in zip(net.blocks, gpt.blocks):
        bias = theirs.attn.qkv.bias.detach().view(3, D)
        if torch.any(bias[0] != 0):
            raise ValueError("a query bias cannot be copied")
        per_head = theirs.attn.qkv.weight.detach().view(3, H, D // H, D)
        for h, head in enumerate(mine.attention.heads):
            head.Q.weight.data = per_head[0, h].clone()
            head.K.weight.data = per_head[1, h].clone()
            head.V.weight.data = per_head[2, h].clone()
        out = theirs.attn.out
        mine.attention.mix.weight.data = out.weight.detach().clone()
        mine.attention.mix.bias.data = torch.addmv(out.bias.detach(), out.weight.detach(), bias[2])
        for a, b in ((mine.norm1, theirs.norm1), (mine.norm2, theirs.norm2),
                     (mine.mlp[0], theirs.mlp.up), (mine.mlp[2], theirs.mlp.down)):
            a.weight.data = b.weight.detach().clone()
            a.bias.data = b.bias.detach().clone()
    net.norm.weight.data = gpt.norm.weight.detach().clone()
    net.norm.bias.data = gpt.norm.bias.detach().clone()
    net.out.weight.data = gpt.head.weight.detach().clone()
    net.out.bias.data = torch.zeros_like(net.out.bias)
    return net


Seed(0)
small = GPT(Config(vocab_size=50, context=16, dim=32, heads=4, layers=2, dropout=0.0)).eval()
copied = CopyToMyTransformer(small)
probe = torch.randint(0, 50, (3, 16))
print("same logits:", torch.allclose(small(probe), copied(probe), atol=1e-5))
