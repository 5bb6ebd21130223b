from otter.test_files import test_case

OK_FORMAT = False

name = "q12"
points = 3

@test_case(points=1, hidden=False, 
    failure_message="The copy should compute the same logits as the GPT: tokens -> embed, positions -> position, for each block the rows of qkv.weight for queries (0..D), keys (D..2D) and values (2D..3D) cut into heads of d = D // H rows, out -> mix, the norms, up -> mlp[0], down -> mlp[2], norm -> norm, and the token table as out.weight with a zero bias.")
def test_copy_new_gpt(Config, GPT, CopyToMyTransformer):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close

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

    def enliven(net, qkv_bias=None):
        """Non-trivial values for a GPT's weights, its blocks one at a time (however they are kept);
        qkv_bias(D) gives the value of every attn.qkv.bias, when it is given."""
        top = {n: t for n, t in net.params(values=False).items() if not n.startswith('blocks.')}
        net.set_params(nontrivial(top))
        for block in net.blocks:
            values = nontrivial(block.params(values=False))
            if qkv_bias is not None and 'attn.qkv.bias' in values:
                values['attn.qkv.bias'] = qkv_bias(values['attn.qkv.bias'].shape[0] // 3)
            block.set_params(values)

    def weights_of(net):
        """Every weight of a GPT by the chapter's names (from state_dict: a tied table under both names)."""
        P = {n: t for n, t in net.state_dict().items() if not n.startswith('blocks.')}
        for i, block in enumerate(net.blocks):
            P.update({f'blocks.{i}.{n}': t for n, t in block.state_dict().items()})
        return P

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
            m = F.gelu(m @ p['mlp.up.weight'].T + p.get('mlp.up.bias', 0))
            h = h + m @ p['mlp.down.weight'].T + p.get('mlp.down.bias', 0)
        h = F.layer_norm(h, (D,), P['norm.weight'], P['norm.bias'])
        return h @ P.get('head.weight', P['tokens.weight']).T
    Config, GPT, CopyToMyTransformer = (student(Config), student(GPT), student(CopyToMyTransformer))
    torch.manual_seed(0)
    gpt = GPT(Config(vocab_size=50, context=16, dim=32, heads=4, layers=2, dropout=0.0)).eval()
    for block in gpt.blocks:
        block.set_params({'attn.qkv.bias': torch.zeros(96)})
    P = weights_of(gpt)
    net = CopyToMyTransformer(gpt)
    ids = torch.randint(0, 50, (3, 16))
    assert close(net(ids), chapter_logits(P, ids, 4, 2), atol=1e-05, rtol=0.0001), "the copy's logits differ from the GPT's"

