from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = 3


@test_case(points=1, hidden=False, failure_message='SameAsPyTorch should say True for an attention without a bug and False for one without the mask or divided by sqrt(D): compute the reference from attn.qkv(x) cut into attn.heads heads, F.scaled_dot_product_attention(q, k, v, is_causal=True), the heads joined again and attn.out, and return torch.allclose(attn(x), reference, atol=1e-5). (It is tried on GIVEN Suspects whose attention the check computes.)')  # noqa: E501
def test_same_as_pytorch(Config, Suspect, SameAsPyTorch):
    import math

    import torch

    from course.handles import close, student

    def nontrivial(shapes):
        """Values with some life in them for every weight and bias (the mask is left alone)."""
        values = {}
        for name, t in shapes.items():
            if not t.is_floating_point() or not name.endswith(("weight", "bias")):
                continue
            if name.endswith("bias"):
                values[name] = 0.3 * torch.randn(t.shape, dtype=t.dtype)
            elif t.dim() == 1:
                values[name] = 1 + 0.3 * torch.randn(t.shape, dtype=t.dtype)
            else:
                values[name] = 1.5 * torch.randn(t.shape, dtype=t.dtype) / math.sqrt(t.shape[-1])
        return values

    def as_bool(said, name):
        """The answer of a check: True or False (a one-element bool tensor is fine too)."""
        if type(said) is bool:
            return said
        if type(said) is torch.Tensor and said.numel() == 1 and said.dtype == torch.bool:
            return bool(said.item())
        raise AssertionError(f"{name} should return True or False, not {type(said).__name__}")

    def attention(P, x, H, bug=None):
        """What an attention with the weights P computes on x (causal, per head, in double
        precision), with `bug` one of the classic mistakes or None."""
        B, T, D = x.shape
        d = D // H
        P = {n: t.double() for n, t in P.items()}
        qkv = x.double() @ P["qkv.weight"].T + P["qkv.bias"]
        q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]
        if bug == "keys for queries":
            q, k = k, q
        if bug == "cut":
            q, k, v = (t.reshape(B, H, T, d) for t in (q, k, v))
        else:
            q, k, v = (t.reshape(B, T, H, d).transpose(1, 2) for t in (q, k, v))
        dots = q @ k.transpose(-2, -1) / math.sqrt(D if bug == "scale" else d)
        allowed = torch.ones(T, T, dtype=torch.bool).tril()
        if bug == "mask the wrong way":
            allowed = allowed.T
        if bug != "no mask":
            dots = dots.masked_fill(~allowed, -math.inf)
        y = dots.softmax(dim=-2 if bug == "softmax over the queries" else -1) @ v
        y = y.reshape(B, T, D) if bug == "join" else y.transpose(1, 2).reshape(B, T, D)
        return y @ P["out.weight"].T + P["out.bias"]

    def asks(SameAsPyTorch, attn, P, x, H, bug):
        """(what your SameAsPyTorch says about a suspect whose attention is attention(P, ., H, bug),
        what it should say); None when the bug changes the numbers too little to call."""
        gap = (attention(P, x, H, bug) - attention(P, x, H)).abs().max().item()
        if 1e-7 <= gap <= 1e-3:
            return None

        def SuspectAttention(attn, x):               # the suspect's forward, computed here
            return attention(P, x, H, bug).to(x.dtype)

        with SameAsPyTorch.swapped(SuspectAttention=SuspectAttention):
            shown = attn(x)
            assert close(shown, attention(P, x, H, bug).to(x.dtype), atol=1e-6), \
                "the GIVEN Suspect does not hand its forward to SuspectAttention: run its cell as given"
            said = as_bool(SameAsPyTorch(attn, x), "SameAsPyTorch")
        return said, gap < 1e-7

    WHAT = {None: "without a bug", "no mask": "without the mask",
            "scale": "that divides by sqrt(D), not sqrt(d)",
            "cut": "that cuts the heads with view(B, H, T, d)",
            "join": "that joins the heads without transposing back",
            "mask the wrong way": "whose mask points the wrong way",
            "keys for queries": "that takes the keys for the queries",
            "softmax over the queries": "with the softmax over the wrong index"}

    Config, Suspect, SameAsPyTorch = student(Config), student(Suspect), student(SameAsPyTorch)
    torch.manual_seed(0)
    attn = Suspect(Config(vocab_size=1024, dropout=0.0)).eval()
    P = nontrivial(attn.params(values=False))
    attn.set_params(P)
    x = torch.randn(2, 16, 128)
    # the broken attentions first: a check that calls the first one it sees right is asked about a bug
    for bug in ("no mask", "scale", None):
        said, right = asks(SameAsPyTorch, attn, P, x, 4, bug)
        assert said == right, f"for an attention {WHAT[bug]} your SameAsPyTorch said {said}"


@test_case(points=1, hidden=True, failure_message="Your SameAsPyTorch gives the wrong answer for attentions with several heads that are right, or that cut the heads apart with view(B, H, T, d), or join them without transposing back. Cut q, k and v of attn.qkv(x) into attn.heads heads as the chapter does (view(B, T, H, D // H).transpose(1, 2)), take B, T, D from x.shape, and put PyTorch's answer back with transpose(1, 2) and reshape(B, T, D) before attn.out. It must say True for the right ones and False for the others, for any sizes and numbers of heads.")  # noqa: E501
def test_same_as_pytorch_heads(Config, Suspect, SameAsPyTorch):
    import torch

    from autograder.checks import suspects
    from course.handles import student
    Config, Suspect, SameAsPyTorch = student(Config), student(Suspect), student(SameAsPyTorch)
    torch.manual_seed(1)
    sizes = [(2, 6, 12, 3, 8), (1, 5, 16, 4, 5), (3, 7, 10, 2, 9), (2, 1, 12, 3, 4), (1, 9, 24, 6, 12)]
    calls = suspects.judges_suspects(Config, Suspect, SameAsPyTorch, sizes, (None, "cut", "join"))
    assert calls >= 6, "too few broken attentions to judge"


@test_case(points=1, hidden=True, failure_message="Your SameAsPyTorch gives the wrong answer for attentions that are right, or that divide by sqrt(D) instead of sqrt(d), have no mask or one that points the wrong way, take the keys for the queries, or take the softmax over the wrong index. Compare attn(x) with PyTorch's own causal attention (is_causal=True) on attn's queries, keys and values (split from attn.qkv(x) in the order q, k, v), for any length T from 1 to the context, and return what torch.allclose(..., atol=1e-5) says.")  # noqa: E501
def test_same_as_pytorch_numbers(Config, Suspect, SameAsPyTorch):
    import torch

    from autograder.checks import suspects
    from course.handles import student
    Config, Suspect, SameAsPyTorch = student(Config), student(Suspect), student(SameAsPyTorch)
    torch.manual_seed(2)
    sizes = [(2, 7, 12, 3, 9), (3, 5, 8, 1, 5), (1, 6, 30, 5, 8), (2, 1, 12, 2, 6), (2, 8, 16, 2, 8)]
    bugs = (None, "scale", "no mask", "mask the wrong way", "keys for queries", "softmax over the queries")
    calls = suspects.judges_suspects(Config, Suspect, SameAsPyTorch, sizes, bugs)
    assert calls >= 12, "too few broken attentions to judge"
