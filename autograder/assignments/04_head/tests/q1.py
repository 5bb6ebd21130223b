from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = 9


@test_case(points=1, hidden=False, failure_message='For head = Head(32, 8) and x of shape (64, 5, 32), head(x) should have shape (64, 5, 8) and head.weights shape (64, 5, 5).')  # noqa: E501
def test_page_shapes(Head):
    import math

    import torch

    from course.handles import student
    Head = student(Head)

    def reference_attention(q, k, v):        # Head is checked with the reference Attention
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v, weights
    reference_attention.__qualname__ = "reference_attention"   # how a message names it: Attention(q, k, v)

    torch.manual_seed(0)
    head = Head(32, 8)
    with head.swapped(Attention=reference_attention):
        out = head(torch.randn(64, 5, 32))
        weights = head.weights.get()
    assert tuple(out.shape) == (64, 5, 8), f"head(x) has shape {tuple(out.shape)}"
    assert tuple(weights.shape) == (64, 5, 5), f"head.weights has shape {tuple(weights.shape)}"


@test_case(points=1, hidden=True, failure_message='Head(dim, head_dim) should have exactly 3 * dim * head_dim trainable numbers: self.Q, self.K and self.V are each nn.Linear(dim, head_dim, bias=False) (no biases, nothing else).')  # noqa: E501
def test_parameter_count(Head):
    import torch

    from autograder.checks import params
    from course.handles import student
    Head = student(Head)
    for dim, head_dim in [(32, 8), (10, 7), (5, 16)]:
        head = Head(dim, head_dim)
        shapes = params.shapes(head)
        total = params.count(shapes)
        assert total == 3 * dim * head_dim, \
            f"Head({dim}, {head_dim}) has {total} trainable numbers, not 3 * {dim} * {head_dim}"
        for name in ("Q", "K", "V"):
            assert getattr(head, name).isa(torch.nn.Linear), f"self.{name} is not an nn.Linear"
            assert shapes.get(f"{name}.weight") == (head_dim, dim), \
                f"self.{name} is not nn.Linear({dim}, {head_dim})"
            assert f"{name}.bias" not in shapes, f"self.{name} has a bias"


@test_case(points=2, hidden=True, failure_message="For one sentence, your Head's output or head.weights are not what the page asks for: queries self.Q(x), keys self.K(x), values self.V(x) (no biases), passed to Attention in that order; head.weights should be the weights Attention returned and the output what it returned for them.")  # noqa: E501
def test_values(Head):
    import math

    import torch

    from autograder.checks import Hint, reference
    from course.handles import close, student
    Head = student(Head)
    torch.manual_seed(2)
    for dim, head_dim, L in [(12, 4, 6), (8, 16, 5), (24, 6, 9), (5, 3, 1)]:
        head = Head(dim, head_dim)
        Wq, Wk, Wv = (1.5 * torch.randn(head_dim, dim) / math.sqrt(dim) for _ in range(3))
        head.set_params({"Q.weight": Wq, "K.weight": Wk, "V.weight": Wv})
        x = torch.randn(L, dim)
        with head.swapped(Attention=reference.attention):       # Head is checked with the reference
            out = head(x)
            weights = head.weights.get()
        want, w = reference.head({"Q.weight": Wq, "K.weight": Wk, "V.weight": Wv}, x)
        if not close(weights, w, atol=1e-5, rtol=1e-4):
            scales = {"sqrt(dim)": math.sqrt(dim), "1 (no scale)": 1.0, "sqrt(L)": math.sqrt(L),
                      "head_dim": head_dim}
            scale = reference.scale_used(weights, x @ Wq.T, x @ Wk.T, scales)
            if scale:
                raise Hint(f"head.weights is softmax(q k^T / {scale}): divide by sqrt(head_dim), the length "
                           "of the queries and keys (q.shape[-1])")
            raise AssertionError(f"Head({dim}, {head_dim}): head.weights is not "
                                 "softmax(q k^T / sqrt(head_dim)) for q = self.Q(x), k = self.K(x)")
        assert close(out, want, atol=1e-5, rtol=1e-4), \
            f"Head({dim}, {head_dim}): the output is not weights @ v for v = self.V(x)"


@test_case(points=1, hidden=True, failure_message='Your Head does not work on a batch. For x of shape (batch, L, dim) it should return (batch, L, head_dim) and keep head.weights of shape (batch, L, L), each sentence exactly as if it came alone.')  # noqa: E501
def test_batched(Head):
    import math

    import torch

    from autograder.checks import properties, reference, work
    from course.handles import student
    Head = student(Head)
    torch.manual_seed(3)
    work.head_works(Head, 12, 3, 7)
    for dim, head_dim, batch, L in [(12, 3, 4, 7), (6, 10, 2, 4), (20, 5, 3, 1)]:
        head = Head(dim, head_dim)
        head.set_params({n: 1.5 * torch.randn(t.shape) / math.sqrt(dim)
                         for n, t in head.params(values=False).items()})
        x = torch.randn(batch, L, dim)
        with head.swapped(Attention=reference.attention):
            out = head(x)
            weights = head.weights.get()
            assert tuple(out.shape) == (batch, L, head_dim), f"head(x) has shape {tuple(out.shape)}"
            assert tuple(weights.shape) == (batch, L, L), f"head.weights has shape {tuple(weights.shape)}"
            # the first and the last sentence of the batch, each against your Head on it alone
            properties.batch_is_alone(properties.and_weights(head), (x,), (out, weights),
                                      sorted({0, batch - 1}), atol=1e-5, rtol=1e-4)


@test_case(points=1, hidden=True, failure_message='After a call, head.weights should be a detached copy of the weights (weights.detach()): a tensor that does not require gradients.')  # noqa: E501
def test_weights_detached(Head):
    import torch

    from autograder.checks import work
    from course.handles import student
    Head = student(Head)
    torch.manual_seed(4)
    work.head_works(Head, 16, 4, 6)
    head = Head(16, 4)
    head(torch.randn(6, 16))                      # with your notebook's own Attention
    info = head.weights.info()
    assert "torch.Tensor" in info["mro"], "head.weights is not a tensor"
    assert info["requires_grad"] is False, "head.weights requires gradients: save weights.detach()"


@test_case(points=1, hidden=True, failure_message="Training must be able to reach Q, K and V: the gradients of your Head's output with respect to their matrices are missing, or do not match how the output changes when the matrices change. Don't detach the output or compute it under torch.no_grad; only the saved copy self.weights is detached.")  # noqa: E501
def test_gradients(Head):
    import math

    import torch

    from autograder.checks import properties, work
    from course.handles import student
    Head = student(Head)
    torch.manual_seed(5)
    work.head_works(Head, 10, 6, 5)
    dim, head_dim, L = 10, 6, 5
    head = Head(dim, head_dim).double()           # with your notebook's own Attention
    start = {n: 1.5 * torch.randn(t.shape, dtype=torch.float64) / math.sqrt(dim)
             for n, t in head.params(values=False).items()}
    head.set_params(start)
    x = torch.randn(L, dim, dtype=torch.float64)
    r = torch.randn(L, head_dim, dtype=torch.float64)
    _, _, param_grads = head.vjp(x, cotangent=r)
    # each gradient, against the slope of your own Head measured by finite differences
    for name in ("Q.weight", "K.weight", "V.weight"):
        grad = param_grads.get(name)
        assert type(grad) is torch.Tensor, f"no gradient reached {name}"
        assert grad.abs().max() > 1e-6, \
            f"the gradient of {name} is zero: your output does not depend on {name[0]}"
        for _ in range(2):
            u = torch.randn(start[name].shape, dtype=torch.float64)

            def output_at(h, name=name, u=u):         # your output, the matrix h along u
                head.set_params({name: start[name] + h * u})
                return head(x)
            properties.slope_agrees(float((grad * u).sum()), output_at, r, 1e-4,
                                    f"the gradient of {name} does not match how the output changes")
            head.set_params({name: start[name]})


@test_case(points=1, hidden=True, failure_message='A head, like Attention, should not care about the order of the sites: shuffling the sites of x should shuffle the rows of the output (and the rows and columns of head.weights) the same way.')  # noqa: E501
def test_permutation(Head):
    import torch

    from autograder.checks import properties, reference, work
    from course.handles import student
    Head = student(Head)
    torch.manual_seed(6)
    work.head_works(Head, 12, 4, 7)
    for dim, head_dim, L in [(12, 4, 7), (9, 5, 4)]:
        head = Head(dim, head_dim)
        x = torch.randn(L, dim)
        perm = torch.randperm(L)
        with head.swapped(Attention=reference.attention):
            properties.permutation(properties.and_weights(head), (x,), perm, weights=True,
                                   atol=1e-5, rtol=1e-4)


@test_case(points=1, hidden=True, failure_message='Either your Head does not compute its output from x with Q, K, V and Attention yet, or it uses one of the pieces the rules forbid (nn.MultiheadAttention, nn.Transformer... or F.scaled_dot_product_attention). Build it from nn.Linear and your Attention.')  # noqa: E501
def test_rules(Head):
    import torch

    from autograder.checks import work
    from course.handles import broken_rules, student
    Head = student(Head)
    torch.manual_seed(7)
    work.head_works(Head, 16, 8, 5)
    head = Head(16, 8)
    out = head(torch.randn(5, 16))                # with your notebook's own Attention
    assert tuple(out.shape) == (5, 8), "Head does not run on one sentence yet"
    broken = broken_rules(Head, head)
    assert not broken, "; ".join(broken)
