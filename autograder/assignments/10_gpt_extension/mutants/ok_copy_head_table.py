# question: q2
# expect: pass
# replaces: CopyToMyTransformer
# why: copies gpt.head.weight (the same table as gpt.tokens.weight) into out, and the qkv rows head by head with index_select
def CopyToMyTransformer(gpt):
    cfg = gpt.cfg
    D, H = cfg.dim, cfg.heads
    d = D // H
    net = page.MyTransformer(cfg.vocab_size, D, H, cfg.layers, max_length=cfg.context, causal=True)
    with torch.no_grad():
        net.embed.weight.copy_(gpt.tokens.weight)
        net.position.weight.copy_(gpt.positions.weight)
        for mine, theirs in zip(net.blocks, gpt.blocks):
            W, b = theirs.attn.qkv.weight, theirs.attn.qkv.bias
            if b[:D].abs().max() > 0:
                raise ValueError("a query bias cannot be copied")
            for h, head in enumerate(mine.attention.heads):
                for s, layer in enumerate((head.Q, head.K, head.V)):
                    layer.weight.copy_(W.index_select(0, torch.arange(s * D + h * d, s * D + (h + 1) * d)))
            mine.attention.mix.weight.copy_(theirs.attn.out.weight)
            mine.attention.mix.bias.copy_(theirs.attn.out.bias + theirs.attn.out.weight @ b[2 * D:])
            for a, c in ((mine.norm1, theirs.norm1), (mine.norm2, theirs.norm2), (mine.mlp[0], theirs.mlp.up),
                         (mine.mlp[2], theirs.mlp.down)):
                a.weight.copy_(c.weight)
                a.bias.copy_(c.bias)
        net.norm.weight.copy_(gpt.norm.weight)
        net.norm.bias.copy_(gpt.norm.bias)
        net.out.weight.copy_(gpt.head.weight)
        net.out.bias.zero_()
    return net
