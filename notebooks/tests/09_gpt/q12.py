from otter.test_files import test_case

OK_FORMAT = False

name = "q12"
points = 3

@test_case(points=1, hidden=False, 
    failure_message="The copy should compute the same logits as the GPT whose weights it copies: tokens -> embed, positions -> position, for each block the rows of qkv.weight for queries (0..D), keys (D..2D) and values (2D..3D) cut into heads of d = D // H rows, out -> mix, the norms, up -> mlp[0], down -> mlp[2], norm -> norm, and the token table as out.weight with a zero bias. (It copies the weights of a new GPT made by the GIVEN GPTWeights.)")
def test_copy_new_gpt(Config, GPTWeights, CopyToMyTransformer):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import close, student

    def nontrivial(shapes):
        """Values with some life in them for every weight and bias (the mask is left alone)."""
        values = {}
        for name, t in shapes.items():
            if not t.is_floating_point() or not name.endswith(('weight', 'bias')):
                continue
            if name.endswith('bias'):
                values[name] = 0.3 * torch.randn(t.shape, dtype=t.dtype)
            elif t.dim() == 1:
                values[name] = 1 + 0.3 * torch.randn(t.shape, dtype=t.dtype)
            else:
                values[name] = 1.5 * torch.randn(t.shape, dtype=t.dtype) / math.sqrt(t.shape[-1])
        return values

    def weights_for(gpt, new=False, kv_bias=False):
        """Values for every weight of a GPTWeights (the tied table once, as tokens.weight): those of
        a new GPT (std 0.02, biases zero, norms 1 and 0) or non-trivial ones; the queries' bias is
        always zero, the keys' and values' only when kv_bias is False."""
        shapes = gpt.params(values=False)
        assert set(shapes) >= {'tokens.weight', 'positions.weight', 'norm.weight'} and 'head.weight' not in shapes and (gpt.head.weight.identity() == gpt.tokens.weight.identity()), 'the GIVEN GPTWeights was changed: run its cell as given'
        if new:
            values = {}
            for name, t in shapes.items():
                if name.endswith('bias'):
                    values[name] = torch.zeros(t.shape)
                elif t.dim() == 1:
                    values[name] = torch.ones(t.shape)
                else:
                    values[name] = 0.02 * torch.randn(t.shape)
        else:
            values = nontrivial(shapes)
        for name in values:
            if name.endswith('attn.qkv.bias'):
                D = values[name].shape[0] // 3
                values[name][:D] = 0
                if not kv_bias:
                    values[name][D:] = 0
        gpt.set_params(values)
        return values

    def chapter_logits(P, ids, H, layers):
        """What the chapter's GPT computes with the weights P: causal, pre-norm, head tied to tokens."""
        B, T = ids.shape
        h = P['tokens.weight'][ids] + P['positions.weight'][:T]
        D = h.shape[-1]
        d = D // H
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        for i in range(layers):
            p = {n[len(f'blocks.{i}.'):]: t for n, t in P.items() if n.startswith(f'blocks.{i}.')}
            a = F.layer_norm(h, (D,), p['norm1.weight'], p['norm1.bias'])
            qkv = a @ p['attn.qkv.weight'].T + p['attn.qkv.bias']
            q, k, v = (qkv[..., s * D:(s + 1) * D].reshape(B, T, H, d).transpose(1, 2) for s in range(3))
            dots = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(future, -math.inf)
            y = (dots.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, D)
            h = h + y @ p['attn.out.weight'].T + p['attn.out.bias']
            m = F.layer_norm(h, (D,), p['norm2.weight'], p['norm2.bias'])
            m = F.gelu(m @ p['mlp.up.weight'].T + p['mlp.up.bias'])
            h = h + m @ p['mlp.down.weight'].T + p['mlp.down.bias']
        h = F.layer_norm(h, (D,), P['norm.weight'], P['norm.bias'])
        return h @ P['tokens.weight'].T

    def is_page_transformer(net, V, C, D, H, L):
        """The copy holds the weights of page.MyTransformer(V, D, H, L, max_length=C): by name and shape."""
        d = D // H
        want = {'embed.weight': (V, D), 'position.weight': (C, D), 'norm.weight': (D,), 'norm.bias': (D,), 'out.weight': (V, D), 'out.bias': (V,)}
        for i in range(L):
            for name, shape in [('norm1.weight', (D,)), ('norm1.bias', (D,)), ('norm2.weight', (D,)), ('norm2.bias', (D,)), ('attention.mix.weight', (D, D)), ('attention.mix.bias', (D,)), ('mlp.0.weight', (4 * D, D)), ('mlp.0.bias', (4 * D,)), ('mlp.2.weight', (D, 4 * D)), ('mlp.2.bias', (D,))] + [(f'attention.heads.{j}.{m}.weight', (d, D)) for j in range(H) for m in 'QKV']:
                want[f'blocks.{i}.{name}'] = shape
        got = {n: tuple(t.shape) for n, t in net.params(values=False).items() if t.is_floating_point() and n.endswith(('weight', 'bias'))}
        assert got == want, "CopyToMyTransformer should return a page.MyTransformer(..., causal=True): the weights of yours are not the page's"
    Config, GPTWeights = (student(Config), student(GPTWeights))
    CopyToMyTransformer = student(CopyToMyTransformer)
    torch.manual_seed(0)
    gpt = GPTWeights(Config(vocab_size=50, context=16, dim=32, heads=4, layers=2, dropout=0.0))
    P = weights_for(gpt, new=True)
    net = CopyToMyTransformer(gpt)
    is_page_transformer(net, 50, 16, 32, 4, 2)
    ids = torch.randint(0, 50, (3, 16))
    assert close(net(ids), chapter_logits(P, ids, 4, 2), atol=1e-05, rtol=0.0001), "the copy's logits differ from the GPT's"
    copied = net(ids)
    net.set_params({'blocks.1.attention.heads.2.Q.weight': torch.randn(8, 32)})
    assert not close(net(ids), copied, atol=1e-06, rtol=0), "new weights in the copy's last block did not change its logits: return page.MyTransformer itself"

