# question: q2
# expect: fail
# replaces: CopyToMyTransformer
# why: copies the weights but forgets that the value bias has to go into mix's bias
def CopyToMyTransformer(gpt):
    cfg = gpt.cfg
    D, H = cfg.dim, cfg.heads
    d = D // H
    net = page.MyTransformer(cfg.vocab_size, D, H, cfg.layers, max_length=cfg.context, causal=True)
    with torch.no_grad():
        net.embed.weight.copy_(gpt.tokens.weight)
        net.position.weight.copy_(gpt.positions.weight)
        for mine, theirs in zip(net.blocks, gpt.blocks):
            W = theirs.attn.qkv.weight
            for h, head in enumerate(mine.attention.heads):
                rows = slice(h * d, (h + 1) * d)
                head.Q.weight.copy_(W[:D][rows])
                head.K.weight.copy_(W[D:2 * D][rows])
                head.V.weight.copy_(W[2 * D:][rows])
            mine.attention.mix.load_state_dict(theirs.attn.out.state_dict())
            mine.norm1.load_state_dict(theirs.norm1.state_dict())
            mine.norm2.load_state_dict(theirs.norm2.state_dict())
            mine.mlp[0].load_state_dict(theirs.mlp.up.state_dict())
            mine.mlp[2].load_state_dict(theirs.mlp.down.state_dict())
        net.norm.load_state_dict(gpt.norm.state_dict())
        net.out.weight.copy_(gpt.head.weight)
        net.out.bias.zero_()
    return net
