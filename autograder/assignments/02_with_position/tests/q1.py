from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 7


@test_case(points=1, hidden=False, failure_message='WithPosition(len(vocab)) should have embed, position and out, and turn a batch of shape (64, 4) into logits of shape (64, 4, len(vocab)).')  # noqa: E501
def test_page_shapes(WithPosition):
    import torch

    from course import SamplePInit, vocab
    from course.handles import StudentError, student
    WithPosition = student(WithPosition)
    torch.manual_seed(0)
    net = WithPosition(len(vocab))
    for name in ("embed", "position", "out"):
        try:
            getattr(net, name).info()
        except StudentError:
            raise AssertionError(f"no self.{name}") from None
    x = torch.stack([SamplePInit() for b in range(64)])
    logits = net(x)
    assert type(logits) is torch.Tensor, f"got a {type(logits).__name__}, not a tensor"
    assert tuple(logits.shape) == (64, 4, len(vocab)), f"got {tuple(logits.shape)}"


@test_case(points=1, hidden=True, failure_message='WithPosition(vocab_size, dim, max_length) should have embed = nn.Embedding(vocab_size, dim), position = nn.Embedding(max_length, dim) and out = nn.Linear(dim, vocab_size), and nothing else: vocab_size*dim + max_length*dim + dim*vocab_size + vocab_size parameters. Are you using the arguments (not fixed numbers)?')  # noqa: E501
def test_sizes(WithPosition):
    import torch

    from autograder.checks import params
    from course.handles import student
    WithPosition = student(WithPosition)
    torch.manual_seed(4)
    for V, dim, M in [(14, 32, 64), (9, 6, 20), (30, 12, 7)]:
        net = WithPosition(V, dim, M) if (dim, M) != (32, 64) else WithPosition(V)
        shapes = params.shapes(net)
        assert net.embed.isa(torch.nn.Embedding) and shapes.get("embed.weight") == (V, dim), "embed"
        assert net.position.isa(torch.nn.Embedding) and shapes.get("position.weight") == (M, dim), "position"
        assert net.out.isa(torch.nn.Linear) and shapes.get("out.weight") == (V, dim), "out"
        assert params.count(shapes) == V * dim + M * dim + dim * V + V, "count"
    net = WithPosition(vocab_size=11, dim=5, max_length=9)
    assert params.shapes(net).get("position.weight") == (9, 5), "keywords"


@test_case(points=1, hidden=True, failure_message='For a batch of shape (batch, L), with any L up to max_length and any vocab_size, the logits should have shape (batch, L, vocab_size).')  # noqa: E501
def test_random_shapes(WithPosition):
    import torch

    from autograder.checks import params
    from course.handles import student
    WithPosition = student(WithPosition)
    torch.manual_seed(1)
    for V, M, batch, L in [(14, 64, 3, 64), (9, 20, 5, 11), (7, 7, 1, 7), (5, 16, 2, 1), (6, 12, 7, 9)]:
        net = WithPosition(V, 32, M)
        L = params.rows(net.params(values=False), "position.weight", L)   # a wrong table: test_sizes
        x = torch.randint(0, V, (batch, L))
        logits = net(x)
        assert type(logits) is torch.Tensor and tuple(logits.shape) == (batch, L, V), \
            f"logits of shape {tuple(getattr(logits, 'shape', ()))} for a batch of shape {(batch, L)}"


@test_case(points=1, hidden=True, failure_message='With a position table of zeros, your logits should be self.out of the word vectors, out(embed[x_i]), computed from your own tables: look the tokens up in self.embed and apply self.out (weight and bias). (This check also asks that your logits depend on the tokens and on each of self.embed, self.position and self.out.)')  # noqa: E501
def test_words(WithPosition):
    import torch

    from autograder.checks import params, reference, work
    from course.handles import close, student
    WithPosition = student(WithPosition)
    torch.manual_seed(2)
    for V, M, batch, L in [(14, 64, 4, 4), (9, 20, 3, 13), (8, 9, 2, 8)]:
        net, shapes, L = work.position_net(WithPosition, V, M, L)
        values = params.normal(shapes)
        if "position.weight" in values:
            values["position.weight"] = torch.zeros(shapes["position.weight"].shape)
        net.set_params(values)
        x = torch.randint(0, V, (batch, L))
        assert close(net(x), reference.word_logits(values, x), atol=1e-4), "the logits differ"


@test_case(points=2, hidden=True, failure_message='The positions do not change your logits as they should: the word at position i gets row i of self.position added to its vector (i = 0, 1, ..., L-1, the same for every sentence of the batch), so that the same word guesses differently at different positions. Are the position vectors added to the word vectors, and looked up at the positions 0..L-1 (not at the tokens)?')  # noqa: E501
def test_positions(WithPosition):
    import torch

    from autograder.checks import params, reference, work
    from course.handles import close, student
    WithPosition = student(WithPosition)
    torch.manual_seed(3)
    for V, M, batch, L in [(14, 64, 4, 4), (9, 20, 3, 13), (11, 9, 2, 8), (7, 10, 3, 1), (30, 7, 2, 6)]:
        net, shapes, L = work.position_net(WithPosition, V, M, L)
        values = params.put(net, params.normal(shapes))
        x = torch.randint(0, V, (batch, L))
        x[0] = x[0, 0]                           # one word repeated: only the positions tell them apart
        with_positions = net(x)
        net.set_params({"position.weight": torch.zeros(shapes["position.weight"].shape)})
        without = net(x)
        assert type(with_positions) is torch.Tensor and type(without) is torch.Tensor, "no logits"
        added = reference.position_logits(values, L)
        assert close(with_positions - without, added.expand(batch, L, V), atol=1e-4), \
            "the positions add the wrong amount"


@test_case(points=1, hidden=True, failure_message='Your positions are not made on the device of x: when x lives on a GPU your network would crash. Make them with torch.arange(x.shape[-1], device=x.device). (This check is for a WithPosition that works on the CPU: logits that depend on the tokens and on each of self.embed, self.position and self.out.)')  # noqa: E501
def test_device(WithPosition):
    import torch

    from autograder.checks import params, properties, work
    from course.handles import student
    WithPosition = student(WithPosition)
    torch.manual_seed(5)
    net = WithPosition(10, 32, 12)                # fewer words than positions
    L = params.rows(net.params(values=False), "position.weight", 5)
    work.logits_use(net, 10, L, ("embed.weight", "position.weight", "out.weight"))     # on the CPU
    net.to("meta")                               # a pretend device: tensors with no numbers
    logits = properties.on_another_device(net, torch.zeros(3, L, dtype=torch.long, device="meta"))
    assert type(logits) is dict and logits.get("device") == "meta", "the logits are not on the device of x"
