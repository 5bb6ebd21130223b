from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = 6

@test_case(points=1, hidden=False, 
    failure_message="GPT(Config(vocab_size=1024)) called on ids of shape (2, 16) should give logits of shape (2, 16, 1024). (This check uses one head.)")
def test_gpt_shape(Config, GPT):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, GPT = (student(Config), student(GPT))
    torch.manual_seed(0)
    net = GPT(Config(vocab_size=1024, heads=1, dropout=0.0)).eval()
    logits = net(torch.randint(0, 1024, (2, 16)))
    assert tuple(logits.shape) == (2, 16, 1024), f'the logits have shape {tuple(logits.shape)}, expected (2, 16, 1024)'

@test_case(points=1, hidden=True, 
    failure_message="GPT(cfg) should have self.tokens = nn.Embedding(vocab_size, dim), self.positions = nn.Embedding(context, dim), self.blocks (an nn.ModuleList of cfg.layers of your Blocks), self.norm = nn.LayerNorm(dim) and self.head = nn.Linear(dim, vocab_size, bias=False), and keep cfg as self.cfg.")
def test_gpt_pieces(Config, GPT):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, GPT = (student(Config), student(GPT))
    for V, C, D, L in [(40, 24, 16, 3), (7, 5, 8, 1)]:
        net = GPT(Config(vocab_size=V, context=C, dim=D, heads=2, layers=L, dropout=0.1))
        shapes = {name: tuple(t.shape) for name, t in net.state_dict().items() if not name.startswith('blocks.')}
        assert net.tokens.isa(torch.nn.Embedding) and shapes.get('tokens.weight') == (V, D), f'self.tokens should be nn.Embedding({V}, {D})'
        assert net.positions.isa(torch.nn.Embedding) and shapes.get('positions.weight') == (C, D), f'self.positions should be nn.Embedding(context={C}, {D})'
        assert net.blocks.isa(torch.nn.ModuleList) and len(net.blocks) == L, f'self.blocks should be an nn.ModuleList of {L} blocks'
        assert all((b.type().endswith('Block') for b in net.blocks)), 'the blocks should be your Block(cfg)'
        assert net.norm.isa(torch.nn.LayerNorm) and shapes.get('norm.weight') == (D,), f'self.norm should be nn.LayerNorm({D})'
        assert net.head.isa(torch.nn.Linear), 'self.head should be an nn.Linear(dim, vocab_size, bias=False)'
        assert 'head.bias' not in shapes and net.head.bias.get() is None, 'self.head should have no bias'
        assert net.cfg.dim.get() == D, 'keep the config as self.cfg'

@test_case(points=1, hidden=True, 
    failure_message="Weight tying: self.head.weight should be the very same tensor as self.tokens.weight (self.head.weight = self.tokens.weight), so the network has vocab_size*dim + context*dim + 2*dim numbers besides its blocks, the table counted once.")
def test_gpt_tied_head(Config, GPT):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    Config, GPT = (student(Config), student(GPT))
    for V, C, D, L in [(40, 24, 16, 3), (300, 8, 8, 1)]:
        net = GPT(Config(vocab_size=V, context=C, dim=D, heads=2, layers=L, dropout=0.1))
        assert net.head.weight.identity() == net.tokens.weight.identity(), 'head.weight is not the same tensor as tokens.weight: set self.head.weight = self.tokens.weight'
        total = sum((math.prod(t.shape) for t in net.params(values=False).values()))
        blocks = sum((math.prod(t.shape) for b in net.blocks for t in b.params(values=False).values()))
        want = V * D + C * D + 2 * D + blocks
        assert total == want, f'{total} trainable numbers; the tables, the final norm and your own blocks make {want}'

@test_case(points=1.5, hidden=True, 
    failure_message="The logits should be head(norm(x)) where x = tokens(ids) + positions(0, 1, ..., T-1) has gone through every block in order (compared with your own blocks called one at a time, for zero, one and two blocks and inputs shorter than context).")
def test_gpt_logits(Config, GPT):
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
    torch.manual_seed(4)
    for V, C, D, L, B, T in [(37, 20, 16, 2, 3, 11), (11, 8, 8, 0, 2, 8), (60, 30, 24, 1, 1, 1)]:
        net = GPT(Config(vocab_size=V, context=C, dim=D, heads=1, layers=L, dropout=0.0)).eval()
        enliven(net)
        P = net.state_dict()
        ids = torch.randint(0, V, (B, T))
        h = P['tokens.weight'][ids] + P['positions.weight'][:T]
        for i in range(L):
            h = net.blocks[i](h)
        want = F.layer_norm(h, (D,), P['norm.weight'], P['norm.bias']) @ P['head.weight'].T
        got = net(ids)
        assert close(got, want, atol=0.0001, rtol=0.0001), f'{L} blocks, ids of shape {(B, T)}: the logits are not head(norm(blocks(tokens(ids) + positions(0..T-1))))'

@test_case(points=0.5, hidden=True, 
    failure_message="Make the positions on the device of the input: torch.arange(T, device=ids.device). Otherwise a model on a GPU gets positions from the CPU.")
def test_gpt_device(Config, GPT):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    from course.handles import watching, StudentError
    Config, GPT = (student(Config), student(GPT))
    net = GPT(Config(vocab_size=9, context=12, dim=8, heads=1, layers=0, dropout=0.0))
    net.to('meta')
    with watching() as seen:
        try:
            logits = net.describe(torch.zeros(2, 5, dtype=torch.long, device='meta'))
        except StudentError as error:
            raise AssertionError(f'with the model on another device your forward failed: {error}') from None
    assert not seen.mixed_devices, f'your forward mixes devices ({sorted(seen.mixed_devices)})'
    assert type(logits) is dict and logits.get('shape') == [2, 5, 9], f"logits of shape {(logits.get('shape') if type(logits) is dict else '?')}"

@test_case(points=1, hidden=True, 
    failure_message="The rules: SelfAttention, MLP, Block and GPT are built from nn.Linear, nn.Embedding, nn.LayerNorm, GELU, @, softmax and friends. No F.scaled_dot_product_attention (it belongs in your check 1 only), nn.MultiheadAttention or nn.Transformer... inside them.")
def test_gpt_rules(Config, GPT, Block, SelfAttention, MLP):
    import math
    import torch
    import torch.nn.functional as F
    from course.handles import student, close
    from course.handles import broken_rules
    Config, GPT = (student(Config), student(GPT))
    Block, SelfAttention, MLP = (student(Block), student(SelfAttention), student(MLP))
    torch.manual_seed(5)
    net = GPT(Config(vocab_size=20, context=16, dim=16, heads=1, layers=1, dropout=0.0))
    logits = net(torch.randint(0, 20, (2, 6)))
    assert tuple(logits.shape) == (2, 6, 20), 'your GPT does not run yet'
    broken = broken_rules(GPT, Block, SelfAttention, MLP, net)
    assert not broken, '; '.join(broken)

