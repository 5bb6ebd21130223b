# question: q2
# expect: fail
# replaces: CopyToMyTransformer
# why: gives head h every H-th row (h, h + H, ...) instead of the block of rows h*d to (h+1)*d
def CopyToMyTransformer(gpt):
    cfg = gpt.cfg
    D, H = cfg.dim, cfg.heads
    net = page.MyTransformer(cfg.vocab_size, D, H, cfg.layers, max_length=cfg.context, causal=True)
    with torch.no_grad():
        net.embed.weight.copy_(gpt.tokens.weight)
        net.position.weight.copy_(gpt.positions.weight)
        for mine, theirs in zip(net.blocks, gpt.blocks):
            W, b = theirs.attn.qkv.weight, theirs.attn.qkv.bias
            for h, head in enumerate(mine.attention.heads):
                head.Q.weight.copy_(W[:D][h::H])
                head.K.weight.copy_(W[D:2 * D][h::H])
                head.V.weight.copy_(W[2 * D:][h::H])
            mine.attention.mix.weight.copy_(theirs.attn.out.weight)
            mine.attention.mix.bias.copy_(theirs.attn.out.bias + theirs.attn.out.weight @ b[2 * D:])
            mine.norm1.load_state_dict(theirs.norm1.state_dict())
            mine.norm2.load_state_dict(theirs.norm2.state_dict())
            mine.mlp[0].load_state_dict(theirs.mlp.up.state_dict())
            mine.mlp[2].load_state_dict(theirs.mlp.down.state_dict())
        net.norm.load_state_dict(gpt.norm.state_dict())
        net.out.weight.copy_(gpt.head.weight)
        net.out.bias.zero_()
    return net
