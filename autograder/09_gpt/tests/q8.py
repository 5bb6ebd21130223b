from otter.test_files import test_case

OK_FORMAT = False

name = "q8"
points = 3

@test_case(points=1, hidden=False, 
    failure_message="Doesn't look into the future: False. The mask is missing or the wrong way round: allowed = torch.tril(...) (site i hears j <= i), and masked_fill(~allowed[:T, :T], -inf) on the dot products before the softmax; torch.triu would be wrong. (This check uses one head.)")
def test_no_peeking(Config, GPT):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, GPT = (student(Config), student(GPT))
    torch.manual_seed(0)
    net = GPT(Config(vocab_size=1024, heads=1, dropout=0.0)).eval()
    first = net(torch.tensor([[1, 5, 6, 7, 8, 9]]))
    second = net(torch.tensor([[1, 5, 6, 7, 8, 3]]))
    assert not torch.isnan(first).any(), 'the logits contain NaN: does every site still hear itself (the diagonal)?'
    assert close(first[:, :5], second[:, :5]), "Doesn't look into the future: False"

@test_case(points=1, hidden=True, 
    failure_message="Your GPT looks into the future: changing later tokens changed the logits at earlier positions (or a sentence depends on the other sentences of its batch). The mask must be the lower triangle (torch.tril), applied to the dot products of every block before the softmax.")
def test_no_peeking_anywhere(Config, GPT):
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
    Config, GPT = (student(Config), student(GPT))
    torch.manual_seed(1)
    for V, C, D, B, T in [(23, 12, 16, 3, 9), (50, 7, 8, 2, 7)]:
        net = GPT(Config(vocab_size=V, context=C, dim=D, heads=1, layers=2, dropout=0.0)).eval()
        enliven(net)
        ids = torch.randint(0, V, (B, T))
        logits = net(ids)
        assert not torch.isnan(logits).any(), 'the logits contain NaN: does every site still hear itself?'
        for i in range(T - 1):
            changed = ids.clone()
            changed[:, i + 1:] = torch.randint(0, V, (B, T - 1 - i))
            assert close(net(changed)[:, :i + 1], logits[:, :i + 1], atol=1e-05, rtol=1e-05), f'changing the tokens after position {i} changed the logits at position {i} or before'
        assert close(net(ids[1:2]), logits[1:2], atol=1e-05, rtol=1e-05), "a sentence's logits depend on the other sentences in its batch"

@test_case(points=1, hidden=True, 
    failure_message="The output of your attention at site i must not depend at all (zero derivative) on the input at sites j > i, and must depend on every site j <= i, itself included: the mask is torch.tril of ones (the diagonal allowed).")
def test_no_gradient_from_the_future(Config, SelfAttention):
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
    Config, SelfAttention = (student(Config), student(SelfAttention))
    torch.manual_seed(2)
    B, T, D = (2, 7, 10)
    attn = SelfAttention(Config(vocab_size=5, context=9, dim=D, heads=1, layers=1, dropout=0.0)).double().eval()
    attn.set_params(nontrivial(attn.params(values=False)))
    x = torch.randn(B, T, D, dtype=torch.float64)
    for i in range(T):
        r = torch.zeros(B, T, D, dtype=torch.float64)
        r[:, i] = torch.randn(B, D, dtype=torch.float64)
        out, grads, _ = attn.vjp(x, cotangent=r)
        g = grads[0]
        assert g is not None, 'no gradient reached the input'
        assert not torch.isnan(g).any(), 'NaN in the gradients: does every site still hear itself?'
        if i + 1 < T:
            assert g[:, i + 1:].abs().max().item() == 0, f'the output at site {i} has a nonzero derivative with respect to the input at sites after {i}'
        assert bool((g[:, :i + 1].abs().amax(dim=(0, 2)) > 0).all()), f'the output at site {i} does not depend on every site j <= {i}: the mask hides too much'

