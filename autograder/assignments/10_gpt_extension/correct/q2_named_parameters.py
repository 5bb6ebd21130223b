# question: q2
# replaces: CopyToMyTransformer
# why: a table from the page's parameter names to tensors made from the GPT's, copied in one loop over named_parameters
@torch.no_grad()
def CopyToMyTransformer(gpt):
    c = gpt.cfg
    d = c.dim // c.heads
    net = page.MyTransformer(c.vocab_size, c.dim, c.heads, c.layers, max_length=c.context, causal=True)
    source = {"embed.weight": gpt.tokens.weight, "position.weight": gpt.positions.weight,
              "norm.weight": gpt.norm.weight, "norm.bias": gpt.norm.bias,
              "out.weight": gpt.tokens.weight, "out.bias": torch.zeros(c.vocab_size)}
    for i, block in enumerate(gpt.blocks):
        q_rows, k_rows, v_rows = block.attn.qkv.weight.split(c.dim)
        q_bias, _, v_bias = block.attn.qkv.bias.split(c.dim)
        if q_bias.count_nonzero() > 0:
            raise ValueError("the queries have a bias")
        for h in range(c.heads):
            for letter, rows in zip("QKV", (q_rows, k_rows, v_rows)):
                source[f"blocks.{i}.attention.heads.{h}.{letter}.weight"] = rows[h * d:(h + 1) * d]
        source[f"blocks.{i}.attention.mix.weight"] = block.attn.out.weight
        source[f"blocks.{i}.attention.mix.bias"] = block.attn.out.bias + block.attn.out.weight @ v_bias
        for page_name, layer in (("norm1", block.norm1), ("norm2", block.norm2),
                                 ("mlp.0", block.mlp.up), ("mlp.2", block.mlp.down)):
            source[f"blocks.{i}.{page_name}.weight"] = layer.weight
            source[f"blocks.{i}.{page_name}.bias"] = layer.bias
    for name, parameter in net.named_parameters():
        parameter.copy_(source[name])
    return net


Seed(0)
small = GPT(Config(vocab_size=50, context=16, dim=32, heads=4, layers=2, dropout=0.0)).eval()
copied = CopyToMyTransformer(small)
probe = torch.randint(0, 50, (3, 16))
print("same logits:", torch.allclose(small(probe), copied(probe), atol=1e-5))
